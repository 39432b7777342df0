//! The model as a Mermaid `sequenceDiagram`, to paste into Markdown. Mermaid
//! has no time axis, so every line says its virtual time, and entries come in
//! log order: a message where it arrived (or was lost), a note where the
//! protocol decided something.

use super::model::{Arrow, Fate, MarkKind, Model, MsgClass, SpanKind};
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

/// An entry's place: its position in the log, its row, and what it is.
type Placed = (usize, usize, Entry);

/// A span drawn as a `rect` block: the entries it runs from and to, and its index.
type Block = (usize, usize, usize);

pub fn render(m: &Model, opts: &ViewOptions) -> String {
    let mut out = String::with_capacity(1024 + 120 * (m.arrows.len() + m.marks.len() + m.bars.len()));
    header(&mut out, m, opts);
    let entries = entries(m);
    let blocks = nested_spans(m, &entries);
    let everyone = if m.lanes.len() > 1 { format!("{},{}", p(0), p(m.lanes.len() - 1)) } else { p(0) };
    let mut w = Writer { m, out, depth: 1, ends: Vec::new(), announced: 0, everyone };
    for (pos, &(_, row, entry)) in entries.iter().enumerate() {
        // Idle stretches passed since the last entry.
        w.breaks_up_to(row);
        for b in blocks.iter().filter(|b| b.0 == pos) {
            w.open_block(b.1, m.spans[b.2].kind);
        }
        let line = entry_line(m, entry, &w.everyone);
        w.line(&line);
        w.close_blocks_ending_at(pos);
    }
    // Idle stretches after the last entry, then whatever is still open.
    w.breaks_up_to(m.rows.len().saturating_sub(1));
    w.close_all_blocks();
    let Writer { mut out, everyone, .. } = w;
    let _ = writeln!(out, "    Note over {everyone}: {}", escape(&format!("{} run ended ({})", m.ended_at, m.stop)));
    out
}

/// Mermaid's name for a lane's participant.
fn p(lane: usize) -> String {
    format!("p{lane}")
}

/// The diagram's first lines: its title as a comment, numbering if asked
/// for, and one participant per lane.
fn header(out: &mut String, m: &Model, opts: &ViewOptions) {
    out.push_str("sequenceDiagram\n");
    if let Some(t) = &opts.title {
        let _ = writeln!(out, "    %% {}", t.replace('\n', " "));
    }
    if opts.autonumber {
        out.push_str("    autonumber\n");
    }
    for (i, lane) in m.lanes.iter().enumerate() {
        let _ = writeln!(out, "    participant {} as {}", p(i), escape(&lane.name));
    }
}

/// Every arrow, mark and bar the diagram tells, in log order.
fn entries(m: &Model) -> Vec<Placed> {
    let mut entries: Vec<Placed> = Vec::new();
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
    entries
}

/// Spans become `rect` blocks where they nest; Mermaid cannot draw two that
/// overlap without nesting, so those keep only their start and end notes.
fn nested_spans(m: &Model, entries: &[Placed]) -> Vec<Block> {
    let pos_of_mark = |k: usize| entries.iter().position(|e| matches!(e.2, Entry::Mark(i) if m.marks[i].k == k));
    let mut blocks: Vec<Block> = Vec::new();
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
        blocks.push((start, end, si));
    }
    blocks.sort_by_key(|b| (b.0, std::cmp::Reverse(b.1), b.2));
    let mut chosen: Vec<Block> = Vec::new();
    for b in blocks {
        let nests = chosen.iter().all(|c| b.1 < c.0 || c.1 < b.0 || (c.0 <= b.0 && b.1 <= c.1));
        if nests {
            chosen.push(b);
        }
    }
    chosen
}

/// One entry's line, without its indentation.
fn entry_line(m: &Model, entry: Entry, everyone: &str) -> String {
    match entry {
        Entry::Arrow(i) => arrow_line(&m.arrows[i]),
        Entry::Mark(i) => {
            let mk = &m.marks[i];
            let over = mk.lane.map_or(everyone.to_string(), p);
            format!("Note over {over}: {}", escape(&format!("{} {}", mk.t, mk.text)))
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
            format!("Note over {},{}: {}", p(b.lane), p(b.target), escape(&text))
        }
    }
}

/// A message: Mermaid's arrow for what it is and what became of it, then
/// everything the picture's tooltip says.
fn arrow_line(a: &Arrow) -> String {
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
    format!("{}{arrow}{}: {}", p(a.from), p(a.to), escape(&text))
}

/// The diagram as it is written: how deep inside `rect` blocks the next
/// line goes, where each open block ends, and the last row whose break has
/// been told.
struct Writer<'a> {
    m: &'a Model,
    out: String,
    depth: usize,
    /// The entry each open block ends at, innermost last.
    ends: Vec<usize>,
    announced: usize,
    /// The note over every lane: from the first participant to the last.
    everyone: String,
}

impl Writer<'_> {
    fn line(&mut self, line: &str) {
        let _ = writeln!(self.out, "{}{line}", indent(self.depth));
    }

    /// A note for each break (idle time, folded work) in the rows after the
    /// last one told, up to `row`.
    fn breaks_up_to(&mut self, row: usize) {
        while self.announced < row {
            self.announced += 1;
            if let Some(words) = self.m.rows[self.announced].gap.break_words() {
                let line = format!("Note over {}: {}", self.everyone, escape(&words));
                self.line(&line);
            }
        }
    }

    /// A block in the span's colour, ending after entry `end`.
    fn open_block(&mut self, end: usize, kind: SpanKind) {
        let colour = match kind {
            SpanKind::Crash => "rgba(255, 204, 188, 0.5)",
            SpanKind::Stall => "rgba(215, 204, 200, 0.5)",
            SpanKind::Partition => "rgba(225, 190, 231, 0.5)",
            SpanKind::Reading => "rgba(179, 229, 252, 0.5)",
        };
        self.line(&format!("rect {colour}"));
        self.ends.push(end);
        self.depth += 1;
    }

    fn close_blocks_ending_at(&mut self, pos: usize) {
        while self.ends.last() == Some(&pos) {
            self.ends.pop();
            self.depth -= 1;
            self.line("end");
        }
    }

    fn close_all_blocks(&mut self) {
        while self.ends.pop().is_some() {
            self.depth -= 1;
            self.line("end");
        }
    }
}

fn indent(depth: usize) -> String {
    "    ".repeat(depth)
}
