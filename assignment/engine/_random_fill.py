"""Random greedy filling of the caps (private numba kernel for the ``random`` baseline)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def take_in_order(workers, tasks, worker_room, task_room, budget):
    """Walk the pairs ``(workers[k], tasks[k])`` in order and take each one whose worker and
    task still have room, while the budget lasts; return which were taken, shape (p,) bool.
    ``worker_room`` and ``task_room`` are used up in place."""
    taken = np.zeros(workers.shape[0], dtype=np.bool_)
    for k in range(workers.shape[0]):
        if budget == 0:
            break
        i, j = workers[k], tasks[k]
        if worker_room[i] > 0 and task_room[j] > 0:
            taken[k] = True
            worker_room[i] -= 1
            task_room[j] -= 1
            budget -= 1
    return taken
