"""Filling the caps with pairs in a given order, then augmenting to a maximum size (private
numba kernels for the ``random`` baseline).

The pairs form a bipartite flow network: source -> worker ``i`` (capacity its room) -> task
``j`` (one unit per pair) -> sink (capacity the task's room), with the budget on the source.
Taking pairs in order gives a maximal flow; an augmenting path from a worker with room to a task
with room (alternating a pair not taken and a pair taken) adds one pair, and when none is left
the flow is maximum (Ford & Fulkerson).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def take_in_order(workers, tasks, order, worker_room, task_room, budget):
    """Walk the pairs ``(workers[k], tasks[k])`` for ``k`` in ``order`` and take each one whose
    worker and task still have room, while the budget lasts; return which were taken, shape
    (p,) bool, and the budget left. ``worker_room`` and ``task_room`` are used up in place."""
    taken = np.zeros(workers.shape[0], dtype=np.bool_)
    for k in order:
        if budget == 0:
            break
        i, j = workers[k], tasks[k]
        if worker_room[i] > 0 and task_room[j] > 0:
            taken[k] = True
            worker_room[i] -= 1
            task_room[j] -= 1
            budget -= 1
    return taken, budget


@njit(cache=True)
def augment(workers, tasks, by_task, task_start, taken, worker_room, task_room, budget):
    """Add pairs along augmenting paths (breadth first from every worker with room) until the
    budget is spent or no path is left; ``taken`` and the rooms are updated in place.
    ``workers`` ascending (pairs worker-major); ``by_task`` the pairs in task order, task
    ``j``'s at ``by_task[task_start[j]:task_start[j + 1]]``. Returns the pairs added."""
    n = worker_room.shape[0]
    worker_start = np.searchsorted(workers, np.arange(n + 1))
    added = 0
    while budget > 0:
        j, via_pair, via_taken = _path(
            workers, tasks, worker_start, by_task, task_start, taken, worker_room, task_room
        )
        if j < 0:
            break
        task_room[j] -= 1
        while True:  # back along the path: its new pairs taken, its taken pairs dropped
            k = via_pair[j]
            taken[k] = True
            i = workers[k]
            if via_taken[i] == -1:
                worker_room[i] -= 1
                break
            taken[via_taken[i]] = False
            j = tasks[via_taken[i]]
        budget -= 1
        added += 1
    return added


@njit(cache=True)
def _path(workers, tasks, worker_start, by_task, task_start, taken, worker_room, task_room):
    """One breadth-first search: ``(a task with room it reached, or -1; the pair not taken
    that reached each task; the taken pair that reached each worker, -1 at a source)``."""
    n, m = worker_room.shape[0], task_room.shape[0]
    via_pair = np.full(m, -1, dtype=np.int64)
    via_taken = np.full(n, -2, dtype=np.int64)  # -2: not reached
    queue = np.empty(n, dtype=np.int64)
    head, tail = 0, 0
    for i in range(n):
        if worker_room[i] > 0:
            via_taken[i] = -1
            queue[tail] = i
            tail += 1
    while head < tail:
        i = queue[head]
        head += 1
        for k in range(worker_start[i], worker_start[i + 1]):
            j = tasks[k]
            if taken[k] or via_pair[j] >= 0:
                continue
            via_pair[j] = k
            if task_room[j] > 0:
                return j, via_pair, via_taken
            for t in range(task_start[j], task_start[j + 1]):
                k2 = by_task[t]
                if taken[k2] and via_taken[workers[k2]] == -2:
                    via_taken[workers[k2]] = k2
                    queue[tail] = workers[k2]
                    tail += 1
    return -1, via_pair, via_taken
