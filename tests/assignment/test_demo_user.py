"""The demo user of runproduct keeps its password across restarts."""

from __future__ import annotations

import stat

import pytest

from assignment.services import demo_user_ensure

pytestmark = pytest.mark.django_db


def test_the_demo_password_is_made_once_kept_private_and_the_same_on_every_start(tmp_path):
    file = tmp_path / "demo-password"
    user, password = demo_user_ensure(password_file=file)
    assert user.check_password(password)
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    again, same = demo_user_ensure(password_file=file)
    assert (again.pk, same) == (user.pk, password)
    again.refresh_from_db()
    assert again.check_password(password)


def test_a_password_changed_since_is_left_alone_and_not_shown(tmp_path):
    file = tmp_path / "demo-password"
    user, _ = demo_user_ensure(password_file=file)
    user.set_password("chosen-by-the-admin")
    user.save()
    again, shown = demo_user_ensure(password_file=file)
    assert shown is None
    again.refresh_from_db()
    assert again.check_password("chosen-by-the-admin")


def test_a_lost_password_file_gives_the_existing_user_a_new_password(tmp_path):
    file = tmp_path / "demo-password"
    user, first = demo_user_ensure(password_file=file)
    file.unlink()
    again, second = demo_user_ensure(password_file=file)
    assert again.pk == user.pk
    assert second != first
    again.refresh_from_db()
    assert again.check_password(second)
