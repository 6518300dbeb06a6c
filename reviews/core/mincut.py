"""Smallest set of pair links whose removal separates two documents of a group.

Used when a "distinct" label conflicts with a group (the editor applies the suggested cut as
a split, on the record). Pure: no Django. Unit-capacity maximum flow
(Edmonds–Karp) over the undirected pair graph; by max-flow/min-cut the saturated links
leaving the source's residual side form a minimum cut.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Hashable, Iterable


def min_cut[N: Hashable](
    edges: Iterable[tuple[N, N]], source: N, sink: N
) -> tuple[set[tuple[N, N]], set[N]]:
    """A minimum set of undirected edges whose removal disconnects `source` from `sink`,
    and the source side of the cut. Each edge is returned as given (a, b) order kept from
    the input. Already disconnected: an empty cut."""
    if source == sink:
        raise ValueError("source and sink are the same node")
    unique: dict[frozenset[N], tuple[N, N]] = {}
    for a, b in edges:
        if a != b:
            unique.setdefault(frozenset((a, b)), (a, b))
    # Undirected unit edge = two opposite arcs of capacity 1 sharing the residual.
    capacity: dict[N, dict[N, int]] = defaultdict(lambda: defaultdict(int))
    for a, b in unique.values():
        capacity[a][b] += 1
        capacity[b][a] += 1

    while True:
        parent: dict[N, N] = {source: source}
        queue = deque([source])
        while queue and sink not in parent:
            u = queue.popleft()
            for v, c in capacity[u].items():
                if c > 0 and v not in parent:
                    parent[v] = u
                    queue.append(v)
        if sink not in parent:
            break
        v = sink
        while v != source:  # unit capacities: every augmenting path carries 1
            u = parent[v]
            capacity[u][v] -= 1
            capacity[v][u] += 1
            v = u

    side = set(parent)
    cut = {e for e in unique.values() if (e[0] in side) != (e[1] in side)}
    return cut, side


def connected[N: Hashable](edges: Iterable[tuple[N, N]], source: N, sink: N) -> bool:
    adjacent: dict[N, set[N]] = defaultdict(set)
    for a, b in edges:
        adjacent[a].add(b)
        adjacent[b].add(a)
    seen = {source}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        if u == sink:
            return True
        for v in adjacent[u] - seen:
            seen.add(v)
            queue.append(v)
    return False
