//! The model as a Mermaid `sequenceDiagram`, to paste into Markdown. Mermaid
//! has no time axis, so every line says its virtual time, and entries come in
//! log order: a message where it arrived (or was lost), a note where the
//! protocol decided something.

use super::model::{Fate, MarkKind, Model, MsgClass, SpanKind};
use super::ViewOptions;
use std::fmt::Write;

/// Text Mermaid shows as written. `;` ends a statement, `#` starts an entity
/// code, `:` separates a message from its text, `<`/`>` could open HTML and
/// `%%` starts a comment: each becomes Mermaid's own entity code.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            ';' => out.push_str("#59;"),
            '#' => out.push_str("#35;"),
            ':' => out.push_str("#58;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '%' => out.push_str("#37;"),
            '{' => out.push_str("#123;"),
            '}' => out.push_str("#125;"),
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

#[derive(Clone, Copy)]
enum Entry {
    Arrow(usize),
    Mark(usize),
    Bar(usize),
}

pub fn render(m: &Model, opts: &ViewOptions) -> String {
    let mut out = String::with_capacity(1024 + 120 * (m.arrows.len() + m.marks.len() + m.bars.len()));
    out.push_str("sequenceDiagram\n");
    if let Some(t) = &opts.title {
        let _ = writeln!(out, "    %% {}", t.replace('\n', " "));
    }
    if opts.autonumber {
        out.push_str("    autonumber\n");
    }
    let p = |lane: usize| format!("p{lane}");
    for (i, lane) in m.lanes.iter().enumerate() {
        let _ = writeln!(out, "    participant {} as {}", p(i), escape(&lane.name));
    }

    let mut entries: Vec<(usize, usize, Entry)> = Vec::new();
    for (i, a) in m.arrows.iter().enumerate() {
        entries.push((a.k, a.end, Entry::Arrow(i)));
    }
    for (i, mk) in m.marks.iter().enumerate() {
        // A file step is noise here; an opened request is told by its bar's note.
        if !matches!(mk.kind, MarkKind::FileStep | MarkKind::Asked) {
            entries.push((mk.k, mk.row, Entry::Mark(i)));
        }
    }
    for (i, b) in m.bars.iter().enumerate() {
        entries.push((b.k, b.from, Entry::Bar(i)));
    }
    // An arrow still in flight is told where it was sent: its row says so.
    for e in &mut entries {
        if let Entry::Arrow(i) = e.2 {
            if m.arrows[i].fate == Fate::InFlight {
                e.1 = m.arrows[i].sent;
            }
        }
    }
    entries.sort_by_key(|e| (e.0, e.1));

    // Spans become `rect` blocks where they nest; Mermaid cannot draw two that
    // overlap without nesting, so those keep only their start and end notes.
    let pos_of_mark = |k: usize| entries.iter().position(|e| matches!(e.2, Entry::Mark(i) if m.marks[i].k == k));
    let mut rects: Vec<(usize, usize, usize)> = Vec::new();
    for (si, s) in m.spans.iter().enumerate() {
        // From the first entry of its row: spans that start together nest.
        let Some(start) = pos_of_mark(s.k).map(|p| entries.iter().position(|e| e.1 >= s.from).unwrap_or(p).min(p))
        else {
            continue;
        };
        let end = if s.open {
            entries.len() - 1
        } else if s.k_end != usize::MAX {
            pos_of_mark(s.k_end).unwrap_or(entries.len() - 1)
        } else {
            entries.iter().rposition(|e| e.1 <= s.to).unwrap_or(start).max(start)
        };
        rects.push((start, end, si));
    }
    rects.sort_by_key(|r| (r.0, std::cmp::Reverse(r.1), r.2));
    let mut chosen: Vec<(usize, usize, usize)> = Vec::new();
    for r in rects {
        let nests = chosen.iter().all(|c| r.1 < c.0 || c.1 < r.0 || (c.0 <= r.0 && r.1 <= c.1));
        if nests {
            chosen.push(r);
        }
    }

    let everyone = if m.lanes.len() > 1 { format!("{},{}", p(0), p(m.lanes.len() - 1)) } else { p(0) };
    let mut announced = 0usize;
    let mut stack: Vec<usize> = Vec::new();
    let mut depth = 1usize;
    for (pos, &(_, row, entry)) in entries.iter().enumerate() {
        // Idle stretches passed since the last entry.
        while announced < row {
            announced += 1;
            if let Some(words) = m.rows[announced].gap.break_words() {
                let _ = writeln!(out, "{}Note over {everyone}: {}", indent(depth), escape(&words));
            }
        }
        for c in chosen.iter().filter(|c| c.0 == pos) {
            let colour = match m.spans[c.2].kind {
                SpanKind::Crash => "rgba(255, 204, 188, 0.5)",
                SpanKind::Stall => "rgba(215, 204, 200, 0.5)",
                SpanKind::Partition => "rgba(225, 190, 231, 0.5)",
                SpanKind::Reading => "rgba(179, 229, 252, 0.5)",
            };
            let _ = writeln!(out, "{}rect {colour}", indent(depth));
            stack.push(c.1);
            depth += 1;
        }
        let ind = indent(depth);
        match entry {
            Entry::Arrow(i) => {
                let a = &m.arrows[i];
                let (arrow, what) = match (a.forged_as.is_some(), a.fate) {
                    (true, Fate::Lost(c)) => ("--x", format!("lost ({}) at {}", c.as_str(), a.t_end)),
                    (false, Fate::Lost(c)) => ("-x", format!("lost ({}) at {}", c.as_str(), a.t_end)),
                    (true, Fate::Delivered) => ("--)", format!("delivered {}", a.t_end)),
                    (_, Fate::InFlight) => ("-)", "still in flight at the end".to_string()),
                    (false, Fate::Delivered) if a.class == MsgClass::Plain => ("-)", format!("delivered {}", a.t_end)),
                    (false, Fate::Delivered) => ("->>", format!("delivered {}", a.t_end)),
                };
                let mut text = match &a.forged_as {
                    Some(who) => format!("FORGED as {who}, {}", a.text),
                    None => a.text.clone(),
                };
                if let Some(w) = &a.words {
                    let _ = write!(text, " {w}");
                }
                let _ = write!(text, " · sent {}, {what}", a.t_sent);
                for n in a.notes.iter().filter(|n| !n.starts_with('✕')) {
                    let _ = write!(text, " · {n}");
                }
                let _ = writeln!(out, "{ind}{}{arrow}{}: {}", p(a.from), p(a.to), escape(&text));
            }
            Entry::Mark(i) => {
                let mk = &m.marks[i];
                let over = mk.lane.map_or(everyone.clone(), p);
                let _ = writeln!(out, "{ind}Note over {over}: {}", escape(&format!("{} {}", mk.t, mk.text)));
            }
            Entry::Bar(i) => {
                let b = &m.bars[i];
                let text = format!(
                    "{} {} asks [{}] ({}), {}",
                    m.rows[b.from].t,
                    m.lanes[b.lane].name,
                    b.label,
                    b.kind,
                    b.deadline.as_deadline()
                );
                let _ = writeln!(out, "{ind}Note over {},{}: {}", p(b.lane), p(b.target), escape(&text));
            }
        }
        while stack.last() == Some(&pos) {
            stack.pop();
            depth -= 1;
            let _ = writeln!(out, "{}end", indent(depth));
        }
    }
    // Idle stretches after the last entry, then whatever is still open.
    while announced + 1 < m.rows.len() {
        announced += 1;
        if let Some(words) = m.rows[announced].gap.break_words() {
            let _ = writeln!(out, "{}Note over {everyone}: {}", indent(depth), escape(&words));
        }
    }
    while stack.pop().is_some() {
        depth -= 1;
        let _ = writeln!(out, "{}end", indent(depth));
    }
    let _ = writeln!(out, "    Note over {everyone}: {}", escape(&format!("{} run ended ({})", m.ended_at, m.stop)));
    out
}

fn indent(depth: usize) -> String {
    "    ".repeat(depth)
}
