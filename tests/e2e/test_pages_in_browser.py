"""A project manager's whole day in a real browser, against a live server and a real worker.

Headless Chromium signs in, creates a project, uploads every kind of data file (and one bad
file, whose line and column must show with nothing written), estimates quality and sees the
heat map, starts a tvcs-iht run and watches its progress bar move and finish, downloads the
assignment and checks it against the caps, compares the methods over three budgets and checks
the plot, starts the next round from the Rounds section and reads its expected gain, reads
the labels, and changes the project from the API docs' "Try it out" with its
session; then a second user gets 404 on every one of those pages. Every page
passes axe-core with no serious or critical violation, and is photographed at 1280 and 390 px.
"""

from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from browser import axe_problems, chromium, require_browser, screenshot, wait_until
from django.contrib.auth import get_user_model
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

from assignment.models import AssignmentRun, Project, QualityMatrix, RunStatus, Worker

pytestmark = pytest.mark.django_db(transaction=True)

SVG = "{http://www.w3.org/2000/svg}"
N_WORKERS, N_TASKS, CATEGORIES = 100, 1000, 5
PER_TASK, PER_WORKER, BUDGET = 3, 30, 2400


def write_project_files(folder: Path, seed: int = 0) -> dict[str, Path]:
    """A project shaped like the paper's Figure 4, as the six kinds of data file."""
    rng = np.random.default_rng(seed)
    skill = rng.uniform(0.5, 0.9, (N_WORKERS, CATEGORIES))
    items = [
        (f"g{c}-{k}", c, int(rng.integers(0, 2))) for c in range(CATEGORIES) for k in range(20)
    ]
    texts = {
        "workers": "worker_id,name\n" + "".join(f"w{i},Worker {i}\n" for i in range(N_WORKERS)),
        "tasks": "task_id,category\n"
        + "".join(f"t{j},c{j % CATEGORIES}\n" for j in range(N_TASKS)),
        "gold_items": "item_id,category,true_label\n"
        + "".join(f"{item},c{c},{label}\n" for item, c, label in items),
        "gold_answers": "worker_id,item_id,answer\n"
        + "".join(
            f"w{i},{item},{label if rng.random() < skill[i, c] else 1 - label}\n"
            for i in range(N_WORKERS)
            for item, c, label in items
        ),
        "quality": "worker_id,category,quality\n"
        + "".join(
            f"w{i},c{c},{skill[i, c]:.3f}\n" for i in range(N_WORKERS) for c in range(CATEGORIES)
        ),
        "answers": "worker_id,task_id,answer\n"
        + "".join(
            f"w{(j + k) % N_WORKERS},t{j},{(j + k) % 2}\n" for j in range(200) for k in range(3)
        ),
    }
    paths = {}
    for kind, text in texts.items():
        paths[kind] = folder / f"{kind}.csv"
        paths[kind].write_text(text, encoding="utf-8")
    return paths


class Visit:
    """A signed-in browser that checks every page it opens with axe-core."""

    def __init__(self, driver, base_url: str, shots: Path) -> None:
        self.driver = driver
        self.base_url = base_url
        self.shots = shots
        self.problems: dict[str, list[str]] = {}

    def open(self, path: str) -> None:
        self.driver.get(self.base_url + path)

    def check(self, name: str) -> None:
        """axe-core on the page as it is now, and its screenshots."""
        problems = axe_problems(self.driver)
        if problems:
            self.problems[name] = problems
        screenshot(self.driver, name, self.shots)

    def find(self, css: str):
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def lines_at_phone_width(self, css: str) -> list[float]:
        """How many lines each element of ``css`` takes at 390 px (its height over its line
        height), the window's size restored after."""
        size = self.driver.get_window_size()
        self.driver.set_window_size(390, 900)
        try:
            return self.driver.execute_script(
                "return [...document.querySelectorAll(arguments[0])].map(e => "
                "e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight));",
                css,
            )
        finally:
            self.driver.set_window_size(size["width"], size["height"])

    def chart_text_px(self, css: str, *, width: int) -> dict[str, float]:
        """The size in CSS pixels at which each shown chart of ``css`` prints its 12-unit text
        in a window ``width`` px wide, by chart id (hidden charts left out); the window's
        size restored after."""
        size = self.driver.get_window_size()
        self.driver.set_window_size(width, 900)
        try:
            return self.driver.execute_script(
                "return Object.fromEntries([...document.querySelectorAll(arguments[0])]"
                ".filter(svg => svg.getClientRects().length)"
                ".map(svg => [svg.id, 12 * svg.getBoundingClientRect().width"
                " / svg.viewBox.baseVal.width]));",
                css,
            )
        finally:
            self.driver.set_window_size(size["width"], size["height"])

    def finds(self, css: str):
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def submit(self, form_css: str = "main form") -> None:
        self.find(f"{form_css} button[type=submit]").click()

    def fetch(self, path: str) -> str:
        """What the browser gets for ``path`` with its own session (a download)."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {credentials: 'same-origin'}).then(r => r.text()).then(done);",
            self.base_url + path,
        )

    def sign_in(self, username: str, password: str) -> None:
        self.open("/accounts/login/")
        self.find("#id_username").send_keys(username)
        self.find("#id_password").send_keys(password)
        self.submit()
        wait_until(lambda: "Signed in as" in self.driver.page_source, timeout=10, what="sign-in")


@pytest.fixture
def browser():
    require_browser()
    driver = chromium()
    yield driver
    driver.quit()


def chart(visit: Visit, css: str) -> ET.Element:
    return ET.fromstring(visit.find(css).get_attribute("outerHTML"))


def points(group: ET.Element) -> int:
    """The point markers of a line's group (hollow ones too: a line that coincides with
    another's)."""
    return sum("chart-point" in e.get("class", "").split() for e in group)


def create_project(visit: Visit) -> Project:
    """The new-project form filled and sent with the keyboard alone, in its visual order."""
    visit.open("/")
    visit.check("projects-empty")
    visit.driver.find_element(By.LINK_TEXT, "New project").click()
    typed = {
        "id_name": "birds <script>alert(1)</script>",
        "id_description": "",
        "id_labels": None,  # keeps "0, 1"
        "id_default_prior": None,  # (the prior over the labels is hidden for two labels)
        "id_default_max_workers_per_task": str(PER_TASK),
        "id_default_max_tasks_per_worker": str(PER_WORKER),
        "id_default_budget": str(BUDGET),
    }
    visit.find("#id_name").click()
    for field, text in typed.items():
        active = visit.driver.switch_to.active_element
        assert active.get_attribute("id") == field  # Tab moves through the form in order
        if text is not None:
            active.send_keys(Keys.CONTROL, "a")
            active.send_keys(Keys.DELETE)
            active.send_keys(text)
        active.send_keys(Keys.TAB)
    active = visit.driver.switch_to.active_element
    assert active.text == "Create the project"  # then the form's button
    visit.check("project-new")
    active.send_keys(Keys.ENTER)
    wait_until(lambda: "/data/" in visit.driver.current_url, timeout=10, what="the data page")
    # The name is shown as text, not run: the page has no alert and shows the tags.
    assert "birds <script>alert(1)</script>" in visit.find("h1").text
    project = Project.objects.get()
    assert (project.default_max_workers_per_task, project.default_budget) == (PER_TASK, BUDGET)
    return project


def upload_everything(visit: Visit, files: dict[str, Path], project: Project) -> None:
    bad = files["workers"].with_name("bad-workers.csv")
    bad.write_text("worker_id,name,max_tasks\nw900,New,\nw901,Bad,-3\n", encoding="utf-8")
    visit.find("#id_workers_file").send_keys(str(bad))
    visit.submit("#kind-workers form")
    problem = wait_until(lambda: visit.finds("#problem-workers"), timeout=10, what="the problem")
    assert "line 3" in problem[0].text
    assert visit.find("#problem-workers .error-line").text == "3"
    assert visit.find("#problem-workers .error-column").text == "max_tasks"
    assert not Worker.objects.filter(project=project).exists()
    visit.check("data-rejected")
    for kind in ("workers", "tasks", "gold_items", "gold_answers", "quality", "answers"):
        visit.find(f"#id_{kind}_file").send_keys(str(files[kind]))
        visit.submit(f"#kind-{kind} form")
        wait_until(
            lambda kind=kind: any(f"{kind}.csv:" in m.text for m in visit.finds(".messages")),
            timeout=60,
            what=f"the {kind} upload",
        )
    assert Worker.objects.filter(project=project).count() == N_WORKERS
    visit.check("data")


def estimate_quality(visit: Visit, project: Project) -> None:
    visit.open(f"/projects/{project.pk}/quality/")
    visit.submit()
    wait_until(lambda: "Quality estimated" in visit.driver.page_source, timeout=30, what="estimate")
    assert QualityMatrix.objects.filter(project=project).count() == 2
    heat = chart(visit, "svg#worker-category")
    cells = heat.findall(f".//{SVG}rect[@class='chart-cell']")
    assert len(cells) == 25 * CATEGORIES  # 100 workers in 25 rank groups x 5 categories
    visit.check("quality")


def run_and_watch(visit: Visit, project: Project) -> AssignmentRun:
    visit.open(f"/projects/{project.pk}/runs/new/")
    # Only the chosen method's options show.
    assert visit.find("#options-tvcs-iht").is_displayed()
    assert not visit.find("#options-q-lp").is_displayed()
    visit.find("#method-q-lp").click()
    assert visit.find("#options-q-lp").is_displayed()
    assert not visit.find("#options-tvcs-iht").is_displayed()
    visit.find("#method-tvcs-iht").click()
    visit.find("#id_tvcs-iht__max_iter").clear()
    visit.find("#id_tvcs-iht__max_iter").send_keys("1000")
    for name, value in (("patience", "1000"), ("bound_gap", "0")):  # a few seconds of steps
        visit.find(f"#id_tvcs-iht__{name}").clear()
        visit.find(f"#id_tvcs-iht__{name}").send_keys(value)
    # steps however much of the budget greedy's start spends
    Select(visit.find("#id_tvcs-iht__search_when_spent")).select_by_value("true")
    visit.find("#id_seed").send_keys("1")
    visit.check("run-new")
    visit.submit()
    wait_until(lambda: "/runs/" in visit.driver.current_url, timeout=10, what="the run page")
    seen = []

    def finished():
        bars = visit.finds("#run-progress")
        if bars:
            seen.append(int(bars[0].get_attribute("value")))
            if len(seen) == 3:
                visit.check("run-running")
            return False
        return visit.finds("#run-accuracy")

    wait_until(finished, timeout=600, what="the run to finish", every=0.2)
    moving = [value for value in seen if 0 < value < 100]
    assert moving, f"the progress bar never moved between 0 and 100: {seen}"
    assert seen == sorted(seen), f"the progress bar went backwards: {seen}"
    run = AssignmentRun.objects.get(project=project, comparison=None)
    assert run.status == RunStatus.SUCCEEDED
    assert visit.find("#run-accuracy").text == f"{run.expected_accuracy:.4f}"
    charts = ("workers-per-task", "tasks-per-worker", "task-accuracy")
    for chart_id in charts:
        assert visit.finds(f"svg#{chart_id}")
    shown = visit.chart_text_px("svg.chart", width=390)
    assert sorted(shown) == sorted(f"{chart_id}-narrow" for chart_id in charts)
    assert min(shown.values()) >= 11
    visit.check("run")
    return run


def check_download(visit: Visit, run: AssignmentRun) -> None:
    link = visit.find("#download-csv").get_attribute("href")
    rows = list(csv.reader(io.StringIO(visit.fetch(link.removeprefix(visit.base_url)))))
    assert rows[0] == ["worker_id", "task_id"]
    pairs = [tuple(row) for row in rows[1:]]
    assert len(pairs) == len(set(pairs)) == run.n_assigned
    assert run.n_assigned <= BUDGET
    workers = [w for w, _ in pairs]
    tasks = [t for _, t in pairs]
    assert max(workers.count(w) for w in set(workers)) <= PER_WORKER
    assert max(tasks.count(t) for t in set(tasks)) <= PER_TASK


def compare(visit: Visit, project: Project) -> str:
    visit.open(f"/projects/{project.pk}/comparisons/new/")
    visit.find("#id_budget_mode_1").click()  # "from A to B in N steps"
    for field, value in (("budget_from", 1200), ("budget_to", 2400), ("budget_steps", 3)):
        visit.find(f"#id_{field}").send_keys(str(value))
    visit.check("comparison-new")
    visit.submit()
    wait_until(lambda: "/comparisons/" in visit.driver.current_url, timeout=10, what="the page")
    visit.check("comparison-running")
    wait_until(
        lambda: visit.finds("#comparison-status[data-live-final]"),
        timeout=900,
        what="the comparison to finish",
        every=1,
    )
    plot = chart(visit, "svg#accuracy-budget")
    lines = {
        group.get("data-series"): points(group)
        for group in plot.findall(f".//{SVG}g[@class='chart-series']")
    }
    assert lines == {"tvcs-iht": 3, "random": 3, "q-lp": 3, "greedy": 3}
    bound = plot.findall(f".//{SVG}g[@class='chart-reference']")
    assert len(bound) == 1
    assert points(bound[0]) == 3
    # The plot is drawn again for a phone, so that its text stays legible there.
    shown = visit.chart_text_px("svg.chart", width=390)
    assert list(shown) == ["accuracy-budget-narrow"]
    assert shown["accuracy-budget-narrow"] >= 11
    shown = visit.chart_text_px("svg.chart", width=1280)
    assert list(shown) == ["accuracy-budget"]
    assert shown["accuracy-budget"] >= 12
    visit.check("comparison")
    return visit.driver.current_url.removeprefix(visit.base_url)


def next_round(visit: Visit, project: Project) -> None:
    """From the project's Rounds section to a round's run page, which says its expected gain."""
    visit.open(f"/projects/{project.pk}/")
    rounds = visit.find("#rounds")
    assert "600 answers collected" in rounds.text
    # The next round's preview is fetched after the page has loaded and swapped in.
    preview = wait_until(
        lambda: visit.finds("#round-preview-gain"), timeout=60, what="the round's preview"
    )[0]
    assert "The next round is expected to gain about +" in preview.text
    assert "with greedy's plan" in preview.text
    assert visit.find("#round-preview").get_attribute("data-live-final") is not None
    visit.check("project-round-preview")
    rounds = visit.find("#rounds")
    rounds.find_element(By.LINK_TEXT, "Start the next round").click()
    wait_until(lambda: "/runs/new/" in visit.driver.current_url, timeout=10, what="the form")
    assert visit.find("#id_next_round").is_selected()
    visit.submit()
    wait_until(lambda: "/runs/new/" not in visit.driver.current_url, timeout=10, what="the run")
    wait_until(lambda: visit.finds("#run-accuracy"), timeout=300, what="the round to finish")
    # Reload (without the form's "#round", which a browser keeps across the redirect and which
    # would make the same URL a jump within the page): the round's facts render on the server.
    visit.open(visit.driver.current_url.removeprefix(visit.base_url).split("#")[0])
    run = AssignmentRun.objects.get(project=project, next_round=True)
    assert run.round_start["answers"] == 600
    assert run.budget == BUDGET - 600
    gain = run.expected_accuracy - run.round_start["accuracy_now"]
    assert f"(expected gain {gain:.4f})" in visit.find("#round-start").text
    visit.check("run-round")


def withdraw_the_round(visit: Visit, project: Project) -> None:
    """Withdrawing a round cannot be undone: the browser asks first, and No keeps it."""
    run = AssignmentRun.objects.get(project=project, next_round=True)
    for answer in ("dismiss", "accept"):
        visit.submit("#withdraw-round")
        alert = WebDriverWait(visit.driver, 10).until(expected_conditions.alert_is_present())
        assert alert.text.startswith(f"Withdraw round #{run.pk}? ")
        getattr(alert, answer)()
        if answer == "dismiss":
            run.refresh_from_db()
            assert run.withdrawn_at is None
            assert visit.finds("#withdraw-round")
    wait_until(lambda: visit.finds("#round-withdrawn"), timeout=10, what="the withdrawal")
    run.refresh_from_db()
    assert run.withdrawn_at is not None


def try_the_api_docs(visit: Visit, project: Project) -> None:
    """The API docs, opened from the menu, send a PATCH with the browser's session."""
    visit.driver.find_element(By.LINK_TEXT, "API docs").click()
    operation = wait_until(
        lambda: visit.finds("#operations-projects-projects_partial_update"),
        timeout=20,
        what="the API docs",
    )[0]
    operation.find_element(By.CSS_SELECTOR, ".opblock-summary-control").click()
    wait_until(
        lambda: operation.find_elements(By.CSS_SELECTOR, ".try-out__btn"),
        timeout=5,
        what="Try it out",
    )[0].click()
    operation.find_element(By.CSS_SELECTOR, "tr[data-param-name='project_id'] input").send_keys(
        str(project.pk)
    )
    body = operation.find_element(By.CSS_SELECTOR, "textarea.body-param__text")
    body.send_keys(Keys.CONTROL, "a")
    body.send_keys(Keys.DELETE)
    body.send_keys('{"description": "changed from the API docs"}')
    operation.find_element(By.CSS_SELECTOR, "button.execute").click()
    status = wait_until(
        lambda: [
            cell.text
            for cell in operation.find_elements(
                By.CSS_SELECTOR, ".live-responses-table .response-col_status"
            )
            if cell.text.isdigit()
        ],
        timeout=20,
        what="the docs' response",
    )
    assert status == ["200"]
    project.refresh_from_db()
    assert project.description == "changed from the API docs"


def test_a_project_manager_goes_from_sign_in_to_compared_assignments(
    browser, live_server, workers, tmp_path
):
    worker = workers("pages")
    user_model = get_user_model()
    user_model.objects.create_user("manager", password="manager-password")
    user_model.objects.create_user("other", password="other-password")
    visit = Visit(browser, live_server.url, tmp_path / "screenshots")
    visit.open("/")
    visit.check("sign-in")
    visit.sign_in("manager", "manager-password")

    project = create_project(visit)
    upload_everything(visit, write_project_files(tmp_path), project)
    visit.open(f"/projects/{project.pk}/")
    visit.check("project")
    estimate_quality(visit, project)
    run = run_and_watch(visit, project)
    check_download(visit, run)
    comparison_page = compare(visit, project)
    next_round(visit, project)
    withdraw_the_round(visit, project)
    pages = {
        "projects": "/",
        "runs": f"/projects/{project.pk}/runs/",
        "comparisons": f"/projects/{project.pk}/comparisons/",
        "labels": f"/projects/{project.pk}/labels/",
        "settings": f"/projects/{project.pk}/settings/",
        "delete": f"/projects/{project.pk}/delete/",
        "account": "/account/",
    }
    for name, path in pages.items():
        visit.open(path)
        visit.check(name)
    visit.open(pages["runs"])
    # On a phone the runs table scrolls sideways; its dates do not break into four lines.
    dates = visit.lines_at_phone_width("tbody td time")
    assert dates
    assert max(dates) < 1.5, dates
    visit.open(pages["labels"])
    assert len(visit.finds("tbody tr")) == 50  # the first page of 200 labelled tasks
    assert not visit.problems, visit.problems
    try_the_api_docs(visit, project)

    # Another user: every page of the first user's project is a 404.
    visit.open("/")
    visit.submit("form.account")
    visit.sign_in("other", "other-password")
    for path in [
        f"/projects/{project.pk}/",
        f"/projects/{project.pk}/data/",
        f"/projects/{project.pk}/quality/",
        f"/runs/{run.pk}/",
        f"/runs/{run.pk}/assignment.csv",
        comparison_page,
        *pages.values(),
    ]:
        if path in ("/", "/account/"):
            continue
        visit.open(path)
        assert visit.driver.title == "Page not found · tvcs-assign", path
    visit.open("/")
    assert "no project yet" in visit.driver.page_source
    assert worker.process.poll() is None


def test_error_pages_and_action_addresses_are_pages_of_the_site(browser, live_server, tmp_path):
    """A 404, an upload's address opened as a page, a form sent to a page that takes none, the
    sign-out address, and a stale tab's form after signing in again in another tab: each is a
    page in the site's layout that passes axe-core."""
    from assignment import services

    user = get_user_model().objects.create_user("manager", password="manager-password")
    project = services.project_create(owner=user, name="errors")
    visit = Visit(browser, live_server.url, tmp_path / "screenshots")
    visit.sign_in("manager", "manager-password")

    visit.open("/runs/99999/")
    assert visit.driver.title == "Page not found · tvcs-assign"
    assert visit.find(".site-header .brand").text == "tvcs-assign"
    visit.check("error-404")

    visit.open(f"/projects/{project.pk}/data/workers/")  # left in the bar by a rejected upload
    assert visit.driver.current_url.endswith(f"/projects/{project.pk}/data/#kind-workers")
    visit.driver.execute_script(
        "const form = document.createElement('form');"
        "form.method = 'post'; form.action = location.pathname;"
        "form.append(document.querySelector('[name=csrfmiddlewaretoken]').cloneNode());"
        "document.body.append(form); form.submit();"
    )
    wait_until(
        lambda: visit.driver.title == "This page takes no form · tvcs-assign",
        timeout=10,
        what="the 405 page",
    )
    visit.check("error-405")

    visit.open("/accounts/logout/")
    assert visit.driver.title == "Sign out · tvcs-assign"
    visit.check("sign-out")

    visit.open("/account/")  # this tab's form is from the session before the next sign-in
    stale = visit.driver.current_window_handle
    visit.driver.switch_to.new_window("tab")
    visit.open("/")
    visit.submit("form.account")
    visit.sign_in("manager", "manager-password")
    visit.driver.switch_to.window(stale)
    visit.submit()
    wait_until(
        lambda: visit.driver.title == "The form was not sent · tvcs-assign",
        timeout=10,
        what="the CSRF failure page",
    )
    assert "session changed or expired" in visit.find("main").text
    visit.check("error-csrf")
    visit.find("main .actions a").click()  # back to the page, which loads it anew
    wait_until(
        lambda: visit.driver.current_url == live_server.url + "/account/",
        timeout=10,
        what="the page again",
    )
    assert not visit.problems, visit.problems


def test_a_form_with_errors_moves_focus_to_a_summary_that_links_each_field(
    browser, live_server, tmp_path
):
    """The new-project form (no worker needed): a label set of three shows only the prior
    over the labels; a bad budget and an empty name are summed up at the top of the page,
    focused and read out, with "Error: " in the title, and a link of the summary goes to its
    field, which is marked invalid."""
    get_user_model().objects.create_user("manager", password="manager-password")
    visit = Visit(browser, live_server.url, tmp_path / "screenshots")
    visit.sign_in("manager", "manager-password")
    visit.open("/projects/new/")
    assert visit.find("#id_default_prior").is_displayed()
    assert not visit.find("#id_default_label_prior").is_displayed()
    labels = visit.find("#id_labels")
    labels.send_keys(Keys.CONTROL, "a")
    labels.send_keys('cat, "dog, or wolf", bird')
    assert not visit.find("#id_default_prior").is_displayed()
    assert visit.find("#id_default_label_prior").is_displayed()
    visit.find("#id_default_budget").send_keys("-5")
    visit.submit()
    summary = wait_until(lambda: visit.finds("#error-summary"), timeout=10, what="the errors")[0]
    assert visit.driver.title.startswith("Error: New project")
    assert visit.driver.switch_to.active_element == summary
    assert summary.location["y"] < visit.driver.execute_script("return window.innerHeight")
    links = {link.text: link for link in summary.find_elements(By.TAG_NAME, "a")}
    assert sorted(links) == [
        "Default budget: Ensure this value is greater than or equal to 0.",
        "Name: This field is required.",
    ]
    links["Default budget: Ensure this value is greater than or equal to 0."].click()
    budget = visit.driver.switch_to.active_element
    assert budget.get_attribute("id") == "id_default_budget"
    assert budget.get_attribute("aria-invalid") == "true"
    assert "id_default_budget_error" in budget.get_attribute("aria-describedby")
    # The three labels are kept: only their prior shows, and the emptied two-label box is
    # not sent.
    assert not visit.find("#id_default_prior").is_displayed()
    visit.check("project-new-errors")
    assert not visit.problems, visit.problems
