"""Where to put the name of each point of a scatter plot so that no name covers a point
marker or another name, in pixels (no Qt): the nearest free spot around its point,
trying the eight sides of the marker first (right first, as a reader expects), then
rings further out; a name that had to move away from its point gets a leader line.

Points are taken most crowded first, so the names of a tight cluster get the spots
next to it before the lone points do.  A name with no free spot in the whole plot (a
plot too small for its names) is left out, never drawn over something."""
from __future__ import annotations

import math
from dataclasses import dataclass

#: pixels between a name and a marker or another name
PAD = 2.0


@dataclass
class Placed:
    """A name's box (x, y: top-left, in pixels, y down), whether it needs a leader line,
    and whether it found a free spot (False: a plot too small for its names)."""

    x: float
    y: float
    w: float
    h: float
    leader: bool
    free: bool = True

    def rect(self) -> tuple[float, float, float, float]:
        return self.x, self.y, self.x + self.w, self.y + self.h


def _rect_circle_gap(r: tuple[float, float, float, float], cx: float, cy: float) -> float:
    """Distance from a circle's centre to the nearest point of a rectangle."""
    dx = max(r[0] - cx, 0.0, cx - r[2])
    dy = max(r[1] - cy, 0.0, cy - r[3])
    return math.hypot(dx, dy)


def _overlap(a, b, pad: float) -> bool:
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def _candidates(px: float, py: float, w: float, h: float, radius: float, rings: int, step: float):
    """Boxes around a point, nearest first: beside the marker on its 8 sides, then on rings
    ``step`` pixels further out, 16 directions each."""
    d0 = radius + PAD
    # the eight sides touching the marker: right, left, above, below, then the corners
    near = [(px + d0, py - h / 2), (px - d0 - w, py - h / 2), (px - w / 2, py - d0 - h), (px - w / 2, py + d0),
            (px + d0 * 0.7, py - d0 * 0.7 - h), (px + d0 * 0.7, py + d0 * 0.7),
            (px - d0 * 0.7 - w, py - d0 * 0.7 - h), (px - d0 * 0.7 - w, py + d0 * 0.7)]
    for x, y in near:
        yield x, y, False
    for k in range(1, rings + 1):
        d = d0 + k * step
        count = max(16, int(2 * math.pi * d / (2 * step)))     # candidates about 2 steps apart
        for j in range(count):
            a = 2 * math.pi * j / count
            ux, uy = math.cos(a), -math.sin(a)
            # the box's side facing the point sits on the ring
            x = px + ux * d - (0 if ux > 0.3 else w if ux < -0.3 else w / 2)
            y = py + uy * d - (0 if uy > 0.3 else h if uy < -0.3 else h / 2)
            yield x, y, True


def place_labels(points: list[tuple[float, float]], sizes: list[tuple[float, float]], radius: float,
                 area: tuple[float, float, float, float], rings: int | None = None) -> list[Placed]:
    """One box per point: inside ``area`` (x0, y0, x1, y1), clear of every marker (circles
    of ``radius`` around the points) and of every box placed before it.  When no spot is
    free within ``rings`` rings (default: out to the area's far corner: a plot too small
    for its names), the box is marked ``free=False`` and the caller leaves that name out."""
    n = len(points)
    step = max(6.0, radius)
    if rings is None:
        rings = int(math.hypot(area[2] - area[0], area[3] - area[1]) / step) + 1
    crowd = [sum(1 for q in points if math.hypot(q[0] - p[0], q[1] - p[1]) < 4 * radius + 60) for p in points]
    order = sorted(range(n), key=lambda i: (-crowd[i], points[i][1], points[i][0]))
    placed: dict[int, Placed] = {}
    for i in order:
        px, py = points[i]
        w, h = sizes[i]
        best = None
        for x, y, far in _candidates(px, py, w, h, radius, rings, step):
            r = (x, y, x + w, y + h)
            if r[0] < area[0] or r[1] < area[1] or r[2] > area[2] or r[3] > area[3]:
                continue
            if any(_rect_circle_gap(r, q[0], q[1]) < radius + PAD for q in points):
                continue
            if any(_overlap(r, p.rect(), PAD) for p in placed.values() if p.free):
                continue
            best = Placed(x, y, w, h, far)
            break
        if best is None:            # no free spot: not drawn (the caller shows it another way)
            best = Placed(px, py, w, h, False, free=False)
        placed[i] = best
    return [placed[i] for i in range(n)]


def label_collisions(points: list[tuple[float, float]], boxes: list[tuple[float, float, float, float]],
                     radius: float) -> list[str]:
    """What a set of name boxes covers: a marker (other than nothing) or another box."""
    out = []
    for i, b in enumerate(boxes):
        for j, (qx, qy) in enumerate(points):
            if _rect_circle_gap(b, qx, qy) < radius:
                out.append(f"name {i} covers the marker of point {j}")
        for k in range(i + 1, len(boxes)):
            if _overlap(b, boxes[k], 0.0):
                out.append(f"names {i} and {k} overlap")
    return out


__all__ = ["Placed", "place_labels", "label_collisions"]
