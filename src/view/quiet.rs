//! Runs of uneventful work folded like idle time: a teammate writing a file
//! in 500 ms steps put a row on the page per step, and nothing else happened
//! on most of them (scenario 04: 19 such rows, a third of the page). Rows
//! whose only marks are a file's tick, and that no arrow, bar, span, state
//! change or label touches, are quiet; three or more in a row become one
//! break that says how many steps it holds and over how long.

use super::layout::{Gap, MarkKind, Model};

/// Fewer quiet rows in a row than this stay: a short run is cheap to draw
/// and shows the pace of the work.
pub const AT_LEAST: usize = 3;

pub fn fold(mut m: Model) -> Model {
    let rows = m.rows.len();
    let mut used = vec![false; rows];
    let mut ticks = vec![0usize; rows];
    used[0] = true;
    used[rows - 1] = true;
    for a in &m.arrows {
        used[a.sent] = true;
        used[a.end] = true;
    }
    for mk in &m.marks {
        if mk.kind == MarkKind::FileStep {
            ticks[mk.row] += 1;
        } else {
            used[mk.row] = true;
        }
    }
    for s in &m.spans {
        used[s.from] = true;
        used[s.to.min(rows - 1)] = true;
    }
    for b in &m.bars {
        used[b.from] = true;
        used[b.end] = true;
        if let Some(r) = b.deadline_row {
            used[r] = true;
        }
    }
    for lane in &m.lanes {
        for s in &lane.segments {
            used[s.from] = true;
            used[s.to] = true;
        }
    }
    // A row shares its moment with the one above it: folding one and not
    // the other would split a moment.
    for i in 1..rows {
        if m.rows[i].gap == Gap::Same && (used[i] || used[i - 1]) {
            used[i] = true;
            used[i - 1] = true;
        }
    }
    let mut keep = vec![true; rows];
    let mut i = 0;
    while i < rows {
        if used[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < rows && !used[i] {
            i += 1;
        }
        if i - start >= AT_LEAST && i < rows {
            let steps: usize = ticks[start..i].iter().sum();
            for k in &mut keep[start..i] {
                *k = false;
            }
            let over = crate::protocol::Millis(m.rows[i].t.0 - m.rows[start - 1].t.0);
            m.rows[i].gap = Gap::Folded { steps, over };
        }
    }
    if keep.iter().all(|&k| k) {
        return m;
    }
    let mut new = vec![usize::MAX; rows];
    let mut next = 0;
    for (r, &k) in keep.iter().enumerate() {
        if k {
            new[r] = next;
            next += 1;
        }
    }
    // Every row anything points at is kept, so `new` is defined wherever it is read.
    let at = |r: usize| new[r];
    m.rows = m.rows.iter().zip(&keep).filter(|(_, &k)| k).map(|(r, _)| *r).collect();
    m.marks.retain(|mk| keep[mk.row]);
    for mk in &mut m.marks {
        mk.row = at(mk.row);
    }
    for a in &mut m.arrows {
        a.sent = at(a.sent);
        a.end = at(a.end);
    }
    for s in &mut m.spans {
        s.from = at(s.from);
        s.to = at(s.to.min(rows - 1));
    }
    for b in &mut m.bars {
        b.from = at(b.from);
        b.end = at(b.end);
        b.deadline_row = b.deadline_row.map(at);
    }
    for lane in &mut m.lanes {
        for s in &mut lane.segments {
            s.from = at(s.from);
            s.to = at(s.to);
        }
    }
    m
}
