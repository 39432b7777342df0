//! The model as an SVG Lamport diagram: lanes left to right, virtual time
//! down the page on a piecewise axis (long idle stretches become fixed-height
//! breaks), arrows from send to delivery.

use super::model::{Arrow, Bar, BarEnd, Fate, Gap, LaneState, Mark, MarkKind, Model, MsgClass, Role, SpanKind};
use super::place::{self, Placer, Rect};
use super::ViewOptions;
use crate::protocol::{GateState, Kind};
use std::fmt::Write;

const LEFT: f64 = 100.0;
const SLOT: f64 = 13.0;
const TEXT_W: f64 = 230.0;
const HEAD: f64 = 150.0;
const NAME_H: f64 = 24.0;
const FONT: &str = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif";

/// Where everything sits on the page.
pub struct Geometry {
    /// x of each lane's lifeline.
    pub x: Vec<f64>,
    /// y of each row.
    pub y: Vec<f64>,
    pub width: f64,
    pub height: f64,
    /// Where the lanes' names are drawn: below the legend, which wraps
    /// onto more rows on a narrower canvas.
    pub head: f64,
}

/// Vertical room for a gap: a few pixels per decade of milliseconds, so 1 ms
/// and 1 s both read as "later" without the second taking a thousand times the room.
fn gap_height(g: Gap) -> f64 {
    match g {
        Gap::First => 0.0,
        Gap::Same => 18.0,
        Gap::Step(ms) => 22.0 + 7.0 * (ms.0.max(1) as f64).log10(),
        Gap::Idle(_) | Gap::Folded { .. } => 64.0,
    }
}

pub fn geometry(m: &Model) -> Geometry {
    let mut x = Vec::with_capacity(m.lanes.len());
    let mut cursor = LEFT + 30.0;
    for lane in &m.lanes {
        let bars = if lane.slots > 0 { lane.slots as f64 * SLOT + 10.0 } else { 0.0 };
        let half_name = name_width(&lane.name) / 2.0;
        cursor += bars.max(half_name);
        x.push(cursor);
        cursor += TEXT_W.max(half_name + 20.0);
    }
    // An arrow's label sits between its two rows: rows that receive an
    // arrow move down until its lines of text fit above the delivery.
    let mut need: Vec<Vec<(usize, f64)>> = vec![Vec::new(); m.rows.len()];
    for a in &m.arrows {
        if a.end > a.sent {
            let words = a.words.as_deref().map_or(0, |w| place::wrap(w, place::WORDS_LINE).len());
            let lines = 1 + words + a.notes.iter().filter(|n| !n.starts_with('✕')).count();
            need[a.end].push((a.sent, 20.0 + 11.0 * lines as f64));
        }
    }
    let width = (cursor + 10.0).max(1000.0);
    // Laid out once to measure it; the picture draws it again.
    let head = HEAD.max(legend(&mut String::new(), width) + 26.0);
    let mut y: Vec<f64> = Vec::with_capacity(m.rows.len());
    let mut at = head + NAME_H + 26.0;
    for (i, r) in m.rows.iter().enumerate() {
        at += gap_height(r.gap);
        for &(from, room) in &need[i] {
            at = at.max(y[from] + room);
        }
        y.push(at);
    }
    let height = at + 70.0;
    Geometry { x, y, width, height, head }
}

fn name_width(name: &str) -> f64 {
    name.chars().count() as f64 * 7.5 + 20.0
}

/// Text for XML: the five characters that could end an attribute or start markup.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0 at all.
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with at most one decimal, the same on every machine.
struct N(f64);

impl std::fmt::Display for N {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = (self.0 * 10.0).round() / 10.0;
        if v == v.trunc() {
            write!(f, "{}", v as i64)
        } else {
            write!(f, "{v:.1}")
        }
    }
}

pub fn state_colour(s: LaneState) -> &'static str {
    match s {
        LaneState::Lead => "#1a237e",
        LaneState::Adversary => "#ad1457",
        LaneState::Outside => "#bdbdbd",
        LaneState::Working => "#43a047",
        LaneState::WaitingApproval => "#f9a825",
        LaneState::Idle => "#90a4ae",
        LaneState::Stopping => "#7e57c2",
        LaneState::Stalled => "#8d6e63",
        LaneState::Shutdown => "#424242",
        LaneState::Killed => "#c62828",
        LaneState::Crashed => "#e64a19",
    }
}

fn class_colour(c: MsgClass) -> &'static str {
    match c {
        MsgClass::Request => "#1565c0",
        MsgClass::Response => "#00796b",
        MsgClass::Plain => "#546e7a",
    }
}

const FORGED: &str = "#d81b60";
/// A read of an inbox file: the span's fill and its outline.
const READING: (&str, &str) = ("#b3e5fc", "#0277bd");
const LOST: &str = "#d50000";

fn mark_colour(k: MarkKind) -> &'static str {
    match k {
        MarkKind::Asked => "#0d47a1",
        MarkKind::Approved | MarkKind::Restart => "#2e7d32",
        MarkKind::Rejected | MarkKind::Blocked | MarkKind::Alert => "#c62828",
        MarkKind::Expired => "#e65100",
        MarkKind::Ignored => "#ad1457",
        MarkKind::Refused => "#6a1b9a",
        MarkKind::Gate(GateState::Approved) | MarkKind::Gate(GateState::NotRequired) => "#2e7d32",
        MarkKind::Gate(_) => "#c62828",
        MarkKind::Action | MarkKind::FileDone | MarkKind::FileStep => "#607d8b",
        MarkKind::Deferred | MarkKind::NoAnswer => "#6d4c41",
        MarkKind::Stopped => "#424242",
        MarkKind::Crash => "#d84315",
        MarkKind::Stall => "#795548",
        MarkKind::Read => READING.1,
        MarkKind::Partial => "#6d4c41",
        MarkKind::Note => "#37474f",
        MarkKind::Deadlock => "#b71c1c",
        MarkKind::DeadlockBroken => "#1565c0",
    }
}

fn fate_colour(f: BarEnd) -> &'static str {
    match f {
        BarEnd::Approved => "#2e7d32",
        BarEnd::Rejected => "#c62828",
        BarEnd::Expired(_) => "#e65100",
        BarEnd::Pending => "#9e9e9e",
    }
}

fn kind_fill(k: Kind) -> &'static str {
    k.spec().colour
}

fn text(out: &mut String, (x, y): (f64, f64), size: f64, fill: &str, anchor: &str, extra: &str, s: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="{}" fill="{fill}" text-anchor="{anchor}"{extra}>{}</text>"#,
        N(x),
        N(y),
        N(size),
        escape(s)
    );
}

/// A label as it will be drawn: text with a white outline underneath,
/// legible over lines it crosses, kept inside a canvas `width` wide: moved in
/// from an edge it would cross, and cut with an ellipsis when wider than the
/// canvas itself (the whole text then in its tooltip).
#[derive(Clone, Debug)]
struct Fitted {
    at: (f64, f64),
    size: f64,
    anchor: &'static str,
    shown: String,
    /// The whole text, when `shown` had to be cut.
    whole: Option<String>,
    rect: Rect,
}

fn fit((x, y): (f64, f64), size: f64, anchor: &'static str, s: &str, width: f64) -> Fitted {
    let room = width - 2.0 * EDGE;
    let mut shown = s.to_string();
    let mut whole = None;
    if place::width(s, size) > room {
        let mut cut: Vec<char> = s.chars().collect();
        while !cut.is_empty() && place::width(&cut.iter().collect::<String>(), size) + size > room {
            cut.pop();
        }
        shown = cut.into_iter().collect::<String>() + "…";
        whole = Some(s.to_string());
    }
    let w = place::width(&shown, size);
    let left = match anchor {
        "middle" => x - w / 2.0,
        "end" => x - w,
        _ => x,
    };
    let shift = if left < EDGE { EDGE - left } else { (width - EDGE - (left + w)).min(0.0) };
    let at = (x + shift, y);
    Fitted { at, size, anchor, rect: place::text_box(at, size, anchor, &shown), shown, whole }
}

fn draw(out: &mut String, f: &Fitted, fill: &str) {
    match &f.whole {
        None => text(out, f.at, f.size, fill, f.anchor, r#" class="halo""#, &f.shown),
        Some(whole) => {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" font-size="{}" fill="{fill}" text-anchor="{}" class="halo">{}<title>{}</title></text>"#,
                N(f.at.0),
                N(f.at.1),
                N(f.size),
                f.anchor,
                escape(&f.shown),
                escape(whole)
            );
        }
    }
}

/// Several lines that move together, as one box.
fn block(lines: &[Fitted]) -> Rect {
    lines.iter().skip(1).fold(lines[0].rect, |r, l| r.union(&l.rect))
}

/// The margin text keeps from the canvas's edges.
const EDGE: f64 = 4.0;

/// What every layer of the picture reads: the model, where its lanes and
/// rows sit, and where the lifelines end.
struct Canvas<'a> {
    m: &'a Model,
    g: Geometry,
    /// The index of the last row.
    last: usize,
    /// Where lifelines, open spans and the names under the lanes end: just
    /// below the last row.
    bottom: f64,
}

/// The picture, drawn as layers from back to front: what is drawn later
/// covers what was drawn before, so lines go under marks and labels.
pub fn render(m: &Model, opts: &ViewOptions) -> String {
    let g = geometry(m);
    let last = m.rows.len() - 1;
    let bottom = g.y[last] + 16.0;
    let c = Canvas { m, g, last, bottom };
    let mut out = String::with_capacity(4096 + 400 * (m.arrows.len() + m.marks.len()));
    document_start(&mut out, &c.g);
    heading(&mut out, m, opts);
    legend(&mut out, c.g.width);

    // Every label's box, so that none is drawn over another: the fixed
    // parts of the page first, then what may move.
    let mut placer = Placer::default();
    for (i, lane) in m.lanes.iter().enumerate() {
        placer.take(place::text_box((c.g.x[i], bottom + 20.0), 11.0, "middle", &foot(lane)));
    }
    time_axis(&mut out, &mut placer, &c);
    spans(&mut out, &c);
    lifelines(&mut out, &c);
    request_bars(&mut out, &c);
    bar_captions(&mut out, &mut placer, &c);
    // The marks' words are placed before the arrows' labels, which then
    // find room around them, but drawn after the arrows, over them.
    let mark_words = place_mark_words(&mut placer, &c);
    arrows(&mut out, &mut placer, &c);
    marks(&mut out, &c, &mark_words);
    names(&mut out, &c);
    out.push_str("</svg>\n");
    out
}

/// The `<svg>` element, the label style, the arrowheads and a white page.
fn document_start(out: &mut String, g: &Geometry) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}">"#,
        w = N(g.width),
        h = N(g.height)
    );
    out.push_str("<style>.halo{paint-order:stroke;stroke:#fff;stroke-width:3px;stroke-linejoin:round}</style>\n");
    out.push_str("<defs>\n");
    for (id, colour) in [
        ("req", class_colour(MsgClass::Request)),
        ("resp", class_colour(MsgClass::Response)),
        ("plain", class_colour(MsgClass::Plain)),
        ("forged", FORGED),
        ("flight", "#9e9e9e"),
    ] {
        let _ = writeln!(
            out,
            r#"<marker id="ah-{id}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>"#
        );
    }
    out.push_str("</defs>\n");
    let _ = writeln!(out, r##"<rect width="{}" height="{}" fill="#ffffff"/>"##, N(g.width), N(g.height));
}

/// The title and a one-line summary of the run under it.
fn heading(out: &mut String, m: &Model, opts: &ViewOptions) {
    let title = opts.title.as_deref().unwrap_or("handshake run");
    text(out, (16.0, 28.0), 18.0, "#212121", "start", r#" font-weight="bold""#, title);
    let agents: usize = m.lanes.iter().map(|l| l.stands_for).sum();
    let messages: usize = m.arrows.iter().map(|a| a.times).sum();
    let groups: Vec<String> = m.lanes.iter().filter(|l| l.stands_for > 1).map(|l| l.name.clone()).collect();
    let drawn = if groups.is_empty() {
        String::new()
    } else {
        format!(" (alike teammates drawn as one: {})", groups.join(", "))
    };
    let requests: usize = m.bars.iter().map(|b| b.times).sum();
    let summary = format!(
        "{} · {} · {} · ended at {} ({}) · time runs down the page",
        crate::words::plural(agents as u64, "agent") + &drawn,
        crate::words::plural(messages as u64, "message arrow"),
        crate::words::plural(requests as u64, "request"),
        m.ended_at,
        m.stop
    );
    text(out, (16.0, 48.0), 12.0, "#546e7a", "start", "", &summary);
}

/// Behind everything: a faint line and the time at each row, and a shaded
/// break where idle time or uneventful work was left out.
fn time_axis(out: &mut String, placer: &mut Placer, c: &Canvas) {
    for (i, r) in c.m.rows.iter().enumerate() {
        let y = c.g.y[i];
        match r.gap {
            Gap::Idle(_) | Gap::Folded { .. } => idle_break(out, placer, c, i),
            Gap::Same => continue,
            _ => {}
        }
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#eeeeee"/>"##,
            N(LEFT),
            N(y),
            N(c.g.width - 8.0),
            N(y)
        );
        text(out, (LEFT - 8.0, y + 4.0), 11.0, "#616161", "end", "", &r.t.to_string());
        placer.take(place::text_box((LEFT - 8.0, y + 4.0), 11.0, "end", &r.t.to_string()));
    }
}

/// The break above row `i`: a dashed box across the page, saying what it
/// leaves out, repeated along a wide page so it is seen wherever one looks.
fn idle_break(out: &mut String, placer: &mut Placer, c: &Canvas, i: usize) {
    let y = c.g.y[i];
    let top = c.g.y[i - 1] + 8.0;
    let _ = writeln!(
        out,
        r##"<rect x="8" y="{}" width="{}" height="{}" fill="#f3f3f3" stroke="#bdbdbd" stroke-dasharray="4 3"/>"##,
        N(top),
        N(c.g.width - 16.0),
        N(y - top - 8.0)
    );
    let label = c.m.rows[i].gap.break_words().unwrap_or_default();
    let mid = (top + y - 8.0) / 2.0 + 4.0;
    text(out, (14.0, mid), 11.0, "#757575", "start", r#" font-style="italic""#, &label);
    placer.take(place::text_box((14.0, mid), 11.0, "start", &label));
    let mut x = LEFT + 400.0;
    while x < c.g.width - 200.0 {
        text(out, (x, mid), 11.0, "#9e9e9e", "middle", r#" font-style="italic""#, &label);
        placer.take(place::text_box((x, mid), 11.0, "middle", &label));
        x += 900.0;
    }
}

/// Crash, stall, partition and reading spans: a tinted box over the lifeline.
fn spans(out: &mut String, c: &Canvas) {
    for s in &c.m.spans {
        let x = c.g.x[s.lane];
        let (top, bot) = (c.g.y[s.from], if s.open { c.bottom } else { c.g.y[s.to] });
        let (fill, stroke) = match s.kind {
            SpanKind::Crash => ("#ffccbc", "#e64a19"),
            SpanKind::Stall => ("#d7ccc8", "#795548"),
            SpanKind::Partition => ("#e1bee7", "#6a1b9a"),
            SpanKind::Reading => READING,
        };
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{}" width="24" height="{}" fill="{fill}" fill-opacity="0.6" stroke="{stroke}" stroke-dasharray="3 2"><title>{}</title></rect>"#,
            N(x - 12.0),
            N(top),
            N((bot - top).max(2.0)),
            escape(&s.text)
        );
    }
}

/// Lifelines: a thin base line, then the states as coloured segments.
fn lifelines(out: &mut String, c: &Canvas) {
    let g = &c.g;
    for (i, lane) in c.m.lanes.iter().enumerate() {
        let x = g.x[i];
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#cfd8dc"/>"##,
            N(x),
            N(g.head + NAME_H),
            N(x),
            N(c.bottom)
        );
        for (n, s) in lane.segments.iter().enumerate() {
            let top = if n == 0 { g.head + NAME_H } else { g.y[s.from] };
            let bot = if s.to == c.last { c.bottom } else { g.y[s.to] };
            let style = if s.state.is_gone() {
                r#" stroke-width="2" stroke-dasharray="2 4""#
            } else if matches!(s.state, LaneState::Adversary | LaneState::Outside) {
                r#" stroke-width="2" stroke-dasharray="6 3""#
            } else {
                r#" stroke-width="5""#
            };
            let _ = writeln!(
                out,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"{style}><title>{}: {}</title></line>"#,
                N(x),
                N(top),
                N(x),
                N(bot),
                state_colour(s.state),
                escape(&lane.name),
                s.state.as_str()
            );
        }
    }
}

/// Where a request bar's left edge is: left of its lane's lifeline, in its slot.
fn bar_x(c: &Canvas, b: &Bar) -> f64 {
    c.g.x[b.lane] - 10.0 - (b.slot as f64 + 1.0) * SLOT
}

/// Request bars on the requester's lifeline, left of it.
fn request_bars(out: &mut String, c: &Canvas) {
    for b in &c.m.bars {
        request_bar(out, c, b);
    }
}

/// One request: a bar from sending to its end state (a dot in the colour of
/// its fate), then a faint outline on to its deadline (an orange tick), or
/// to an arrowhead at the bottom when the deadline falls after the end.
fn request_bar(out: &mut String, c: &Canvas, b: &Bar) {
    let g = &c.g;
    let x = bar_x(c, b);
    let top = g.y[b.from];
    let end = g.y[b.end].max(top + 4.0);
    let reach = b.deadline_row.map_or(c.bottom, |r| g.y[r]).max(end);
    let deadline = match b.deadline_row {
        None if !b.deadline.is_never() => format!("deadline {} (after the end)", b.deadline),
        _ => b.deadline.as_deadline(),
    };
    let tip = format!("{} {} request: {}, {}", b.label, b.kind, b.fate.as_str(), deadline);
    if reach > end {
        let _ = writeln!(
            out,
            r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#9e9e9e" stroke-dasharray="2 3"/>"##,
            N(x),
            N(end),
            N(SLOT - 3.0),
            N(reach - end)
        );
    }
    let _ = writeln!(
        out,
        r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}" stroke="{}"><title>{}</title></rect>"#,
        N(x),
        N(top),
        N(SLOT - 3.0),
        N(end - top),
        kind_fill(b.kind),
        class_colour(MsgClass::Request),
        escape(&tip)
    );
    let cx = x + (SLOT - 3.0) / 2.0;
    if let Some(r) = b.deadline_row {
        let y = g.y[r];
        let _ = writeln!(
            out,
            r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e65100" stroke-width="2"/>"##,
            N(x - 2.0),
            N(y),
            N(x + SLOT - 1.0),
            N(y)
        );
    } else {
        let _ = writeln!(out, r##"<path d="M{},{} l-4,-6 h8 z" fill="#9e9e9e"/>"##, N(cx), N(reach));
    }
    let _ = writeln!(
        out,
        r#"<circle cx="{}" cy="{}" r="4" fill="{}"><title>{}</title></circle>"#,
        N(cx),
        N(end),
        fate_colour(b.fate),
        escape(&tip)
    );
}

/// The captions of bars whose opening no words beside the lifeline tell,
/// written down inside their own bar; drawn after every bar, so no
/// neighbour covers them.
fn bar_captions(out: &mut String, placer: &mut Placer, c: &Canvas) {
    for b in c.m.bars.iter().filter(|b| !b.told) {
        let x = bar_x(c, b);
        let caption = format!("{} · {}", b.label, b.deadline.as_deadline());
        let (tx, ty) = (x + 1.5, c.g.y[b.from] + 3.0);
        placer.take(Rect { x0: x - 2.0, y0: ty, x1: x + SLOT - 1.0, y1: ty + place::width(&caption, 8.0) });
        let _ = writeln!(
            out,
            r##"<text x="{}" y="{}" font-size="8" fill="#0d47a1" transform="rotate(90 {} {})">{}</text>"##,
            N(tx),
            N(ty),
            N(tx),
            N(ty),
            escape(&caption)
        );
    }
}

/// Where each mark's words go (`None` for a mark without words): notes
/// across the page first, then words beside lifelines, each on the first
/// side and height where they hide nothing.
fn place_mark_words(placer: &mut Placer, c: &Canvas) -> Vec<Option<Fitted>> {
    let g = &c.g;
    let mut words_at: Vec<Option<Fitted>> = vec![None; c.m.marks.len()];
    for (i, mk) in c.m.marks.iter().enumerate() {
        if mk.lane.is_some() {
            continue;
        }
        let y = g.y[mk.row];
        let words = format!("note: {}", mk.text);
        let options = [
            fit((LEFT + 6.0, y - 3.0), 10.5, "start", &words, g.width),
            fit((LEFT + 6.0, y + 12.0), 10.5, "start", &words, g.width),
            fit((g.width - 12.0, y - 3.0), 10.5, "end", &words, g.width),
        ];
        let pick = placer.choose(&options.iter().map(|o| o.rect).collect::<Vec<_>>());
        words_at[i] = Some(options[pick].clone());
    }
    for (i, mk) in c.m.marks.iter().enumerate() {
        let Some(lane) = mk.lane else { continue };
        if mk.kind == MarkKind::FileStep {
            continue;
        }
        let (x, y) = (g.x[lane], g.y[mk.row]);
        // A refused send's stub points right unless its target is to the left.
        let stub_right = mk.kind == MarkKind::Refused && !mk.toward.is_some_and(|t| g.x[t] < x);
        let dx = if stub_right { 36.0 } else { 8.0 };
        // Words that would run off the right edge start left of the lifeline.
        let fits = x + dx + place::width(&mk.text, 10.5) <= g.width - EDGE;
        let sides = if fits { [(x + dx, "start"), (x - 10.0, "end")] } else { [(x - 10.0, "end"), (x + dx, "start")] };
        let mut options = Vec::new();
        for dy in [0.0, -9.0, 9.0, -18.0, 18.0] {
            for (tx, anchor) in sides {
                options.push(fit((tx, y + 4.0 + dy), 10.5, anchor, &mk.text, g.width));
            }
        }
        let pick = placer.choose(&options.iter().map(|o| o.rect).collect::<Vec<_>>());
        words_at[i] = Some(options.swap_remove(pick));
    }
    words_at
}

/// Where an arrow was drawn: its label and its cross are placed along it.
struct Line {
    from: (f64, f64),
    to: (f64, f64),
    /// 1 when it points right, -1 when it points left.
    dir: f64,
    colour: &'static str,
}

/// Messages: each an arrow, its label, and a cross where it was lost.
fn arrows(out: &mut String, placer: &mut Placer, c: &Canvas) {
    for a in &c.m.arrows {
        let line = arrow_line(out, c, a);
        arrow_label(out, placer, c, a, &line);
        if let Fate::Lost(cause) = a.fate {
            lost_cross(out, placer, c.g.width, &line, cause);
        }
    }
}

/// The arrow itself, coloured and dashed by what the message is and what
/// became of it, with everything about it in its tooltip.
fn arrow_line(out: &mut String, c: &Canvas, a: &Arrow) -> Line {
    let (x1, y1) = (c.g.x[a.from], c.g.y[a.sent]);
    let (xt, y2) = (c.g.x[a.to], c.g.y[a.end]);
    let dir = if xt >= x1 { 1.0 } else { -1.0 };
    let (colour, marker) = match (a.forged_as.is_some(), a.fate, a.class) {
        (true, _, _) => (FORGED, "forged"),
        (_, Fate::InFlight, _) => ("#9e9e9e", "flight"),
        (_, _, MsgClass::Request) => (class_colour(a.class), "req"),
        (_, _, MsgClass::Response) => (class_colour(a.class), "resp"),
        (_, _, MsgClass::Plain) => (class_colour(a.class), "plain"),
    };
    let x2 = match a.fate {
        // The network lost it on the way; the receiver never saw it.
        Fate::Lost(crate::trace::Cause::Drop | crate::trace::Cause::Partition) => x1 + (xt - x1) * 0.6,
        // It reached the receiver, which was gone or went down with it.
        Fate::Lost(_) => xt - dir * 8.0,
        _ => xt - dir * 3.0,
    };
    let dash = match (a.forged_as.is_some(), a.fate) {
        (true, _) => r#" stroke-dasharray="7 4""#,
        (_, Fate::InFlight) => r#" stroke-dasharray="2 3""#,
        _ => "",
    };
    let head =
        if matches!(a.fate, Fate::Lost(_)) { String::new() } else { format!(r#" marker-end="url(#ah-{marker})""#) };
    let said = a.words.as_ref().map(|w| format!(" {w}")).unwrap_or_default();
    let tip = format!("#{} {}{said} · sent {} · {} {}", a.seq, a.text, a.t_sent, fate_word(a.fate), a.t_end);
    let _ = writeln!(
        out,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="1.6"{dash}{head}><title>{}</title></line>"#,
        N(x1),
        N(y1),
        N(x2),
        N(y2),
        escape(&tip)
    );
    Line { from: (x1, y1), to: (x2, y2), dir, colour }
}

/// An arrow's label: its words (wrapped, above), its type and request, and
/// what faults did to it (below). It sits at the middle of the arrow, or
/// near its start when the arrow is long, so a fan-out keeps its labels
/// apart; where that would hide another label it slides along the arrow,
/// then up or down.
fn arrow_label(out: &mut String, placer: &mut Placer, c: &Canvas, a: &Arrow, line: &Line) {
    let ((x1, y1), (x2, y2)) = (line.from, line.to);
    let along: &[f64] = if (x2 - x1).abs() > 2.0 * TEXT_W {
        &[0.25, 0.15, 0.35, 0.45, 0.55, 0.65, 0.75]
    } else {
        &[0.5, 0.35, 0.65, 0.25, 0.75, 0.15, 0.85]
    };
    let extra = a.notes.iter().filter(|n| !n.starts_with('✕')).count() as f64;
    let mut label = a.text.clone();
    if let Some(who) = &a.forged_as {
        label = format!("FORGED as {who}: {label}");
    }
    let mut options: Vec<Vec<(Fitted, &'static str)>> = Vec::new();
    // Last of all, the words only in the arrow's tooltip: a page this
    // crowded has no room for them beside the arrow.
    let shifts = [0.0, -12.0, 12.0, -24.0, 24.0, -36.0, 36.0]
        .into_iter()
        .flat_map(|dy| along.iter().map(move |&f| (f, dy, true)))
        .chain(along.iter().map(|&f| (f, 0.0, false)));
    for (f, dy, with_words) in shifts {
        let at = (x1 + (x2 - x1) * f, y1 + (y2 - y1) * f + 4.0 - 5.5 * extra + dy);
        options.push(label_lines(a, &label, at, with_words, line.colour, c.g.width));
    }
    let boxes: Vec<Rect> = options.iter().map(|o| block(&o.iter().map(|l| l.0.clone()).collect::<Vec<_>>())).collect();
    let pick = placer.choose(&boxes);
    for (fitted, fill) in &options[pick] {
        draw(out, fitted, fill);
    }
}

/// One place to try for an arrow's label, its type line at `(lx, ly)`: the
/// lines it would take, each with its colour.
fn label_lines(
    a: &Arrow,
    label: &str,
    (lx, ly): (f64, f64),
    with_words: bool,
    colour: &'static str,
    width: f64,
) -> Vec<(Fitted, &'static str)> {
    let mut lines = Vec::new();
    if let Some(w) = a.words.as_ref().filter(|_| with_words) {
        // Words go above the type, so both stay near the arrow.
        let wrapped = place::wrap(w, place::WORDS_LINE);
        let above = wrapped.len() as f64;
        for (i, line) in wrapped.iter().enumerate() {
            lines.push((fit((lx, ly - 11.0 * (above - i as f64)), 9.5, "middle", line, width), colour));
        }
    }
    lines.push((fit((lx, ly), 10.0, "middle", label, width), colour));
    let mut ny = ly + 11.0;
    for note in a.notes.iter().filter(|n| !n.starts_with('✕')) {
        lines.push((fit((lx, ny), 9.0, "middle", note, width), "#e65100"));
        ny += 10.0;
    }
    lines
}

/// A lost message's end: a red cross, and its cause beside it on the first
/// side that hides nothing.
fn lost_cross(out: &mut String, placer: &mut Placer, width: f64, line: &Line, cause: crate::trace::Cause) {
    let ((x2, y2), dir) = (line.to, line.dir);
    let s = 5.0;
    let _ = writeln!(
        out,
        r#"<path d="M{},{} l{},{} M{},{} l{},{}" stroke="{LOST}" stroke-width="2.5"/>"#,
        N(x2 - s),
        N(y2 - s),
        N(2.0 * s),
        N(2.0 * s),
        N(x2 - s),
        N(y2 + s),
        N(2.0 * s),
        N(-2.0 * s)
    );
    let (near, far) = if dir > 0.0 { ("end", "start") } else { ("start", "end") };
    let words = format!("✕ lost: {}", cause.as_str());
    let options = [
        fit((x2 - dir * 9.0, y2 + 14.0), 10.0, near, &words, width),
        fit((x2 - dir * 9.0, y2 - 9.0), 10.0, near, &words, width),
        fit((x2 + dir * 9.0, y2 + 14.0), 10.0, far, &words, width),
        fit((x2 + dir * 9.0, y2 - 9.0), 10.0, far, &words, width),
        fit((x2 - dir * 9.0, y2 + 25.0), 10.0, near, &words, width),
    ];
    let pick = placer.choose(&options.iter().map(|o| o.rect).collect::<Vec<_>>());
    draw(out, &options[pick], LOST);
}

/// Marks: a glyph on the lifeline (or a dotted line across the page for a
/// note about the whole run) and its words where `place_mark_words` put them.
fn marks(out: &mut String, c: &Canvas, words_at: &[Option<Fitted>]) {
    for (mk, words) in c.m.marks.iter().zip(words_at) {
        let y = c.g.y[mk.row];
        let colour = mark_colour(mk.kind);
        match mk.lane {
            None => {
                let _ = writeln!(
                    out,
                    r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#90a4ae" stroke-dasharray="1 3"/>"##,
                    N(LEFT),
                    N(y),
                    N(c.g.width - 8.0),
                    N(y)
                );
            }
            Some(lane) => glyph(out, c, mk, (c.g.x[lane], y), colour),
        }
        if let Some(f) = words {
            draw(out, f, colour);
        }
    }
}

/// A mark's shape on its lifeline at `(x, y)`: a tick for a file step, a
/// square for the plan gate (hollow when open), a stub for a refused send,
/// a ring for a deadlock, a filled square for a stop or crash, else a dot.
fn glyph(out: &mut String, c: &Canvas, mk: &Mark, (x, y): (f64, f64), colour: &str) {
    let _ = match mk.kind {
        MarkKind::FileStep => writeln!(
            out,
            r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#607d8b"><title>{}</title></line>"##,
            N(x - 5.0),
            N(y),
            N(x + 5.0),
            N(y),
            escape(&mk.text)
        ),
        MarkKind::Gate(state) => {
            let fill = if matches!(state, GateState::Approved | GateState::NotRequired) { "#ffffff" } else { colour };
            writeln!(
                out,
                r#"<rect x="{}" y="{}" width="9" height="9" fill="{fill}" stroke="{colour}" stroke-width="2"/>"#,
                N(x - 4.5),
                N(y - 4.5)
            )
        }
        MarkKind::Refused => {
            let dir = match mk.toward {
                Some(t) if c.g.x[t] < x => -1.0,
                _ => 1.0,
            };
            let end = x + dir * 30.0;
            writeln!(
                out,
                r#"<path d="M{},{} L{},{} M{},{} v12" stroke="{colour}" stroke-width="2" fill="none"/>"#,
                N(x),
                N(y),
                N(end),
                N(y),
                N(end),
                N(y - 6.0)
            )
        }
        // A ring: the cycle, drawn where each member is stuck.
        MarkKind::Deadlock | MarkKind::DeadlockBroken => writeln!(
            out,
            r#"<circle cx="{}" cy="{}" r="6" fill="none" stroke="{colour}" stroke-width="3"/>"#,
            N(x),
            N(y)
        ),
        MarkKind::Stopped | MarkKind::Crash => {
            writeln!(out, r#"<rect x="{}" y="{}" width="10" height="10" fill="{colour}"/>"#, N(x - 5.0), N(y - 5.0))
        }
        _ => writeln!(out, r##"<circle cx="{}" cy="{}" r="4" fill="{colour}" stroke="#ffffff"/>"##, N(x), N(y)),
    };
}

/// Names on top, and at the bottom with the roster's last word.
fn names(out: &mut String, c: &Canvas) {
    for (i, lane) in c.m.lanes.iter().enumerate() {
        let x = c.g.x[i];
        let w = name_width(&lane.name);
        let (fill, stroke) = match lane.role {
            Role::Lead => ("#e8eaf6", "#1a237e"),
            Role::Adversary => ("#fce4ec", FORGED),
            Role::Outside => ("#f5f5f5", "#9e9e9e"),
            Role::Teammate => ("#f1f8e9", "#558b2f"),
        };
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" rx="4" fill="{fill}" stroke="{stroke}"/>"#,
            N(x - w / 2.0),
            N(c.g.head),
            N(w),
            N(NAME_H)
        );
        text(out, (x, c.g.head + 16.0), 12.0, "#212121", "middle", r#" font-weight="bold""#, &lane.name);
        text(out, (x, c.bottom + 20.0), 11.0, "#424242", "middle", "", &foot(lane));
    }
}

/// What is written under a lane: its name and the roster's last word.
fn foot(lane: &super::model::Lane) -> String {
    match (lane.last, lane.role) {
        (Some(s), _) => format!("{} · {}", lane.name, s),
        (None, Role::Outside) => format!("{} · {}", lane.name, LaneState::Outside.as_str()),
        (None, _) => lane.name.clone(),
    }
}

fn fate_word(f: Fate) -> String {
    match f {
        Fate::Delivered => "delivered".into(),
        Fate::Lost(c) => format!("lost ({})", c.as_str()),
        Fate::InFlight => "still in flight at".into(),
    }
}

/// Where the legend's next entry goes: entries flow left to right and wrap
/// before the canvas's right edge, each group on rows of its own, so no
/// entry is drawn off a narrow picture (22 and 26 lost their last one).
struct Flow {
    x: f64,
    y: f64,
    /// Where a group's wrapped rows start: under its first entry.
    indent: f64,
    right: f64,
}

const LEGEND_TOP: f64 = 76.0;
const LEGEND_ROW: f64 = 24.0;

impl Flow {
    fn new(width: f64) -> Flow {
        Flow { x: 16.0, y: LEGEND_TOP - LEGEND_ROW, indent: 16.0, right: width - 16.0 }
    }

    /// A group's bold title, on a row of its own.
    fn group(&mut self, out: &mut String, title: &str, room: f64) {
        self.y += LEGEND_ROW;
        text(out, (16.0, self.y + 4.0), 11.0, "#212121", "start", r#" font-weight="bold""#, title);
        self.x = 16.0 + room;
        self.indent = self.x;
    }

    /// Room for an entry `w` wide: where it starts, on this row or the next.
    fn place(&mut self, w: f64) -> (f64, f64) {
        if self.x + w > self.right && self.x > self.indent {
            self.y += LEGEND_ROW;
            self.x = self.indent;
        }
        let at = (self.x, self.y);
        self.x += w;
        at
    }
}

/// Draws the legend for a canvas `width` wide; returns the y of its last row.
fn legend(out: &mut String, width: f64) -> f64 {
    let mut f = Flow::new(width);
    f.group(out, "status", 48.0);
    legend_states(out, &mut f);
    f.group(out, "messages", 66.0);
    legend_messages(out, &mut f);
    f.group(out, "requests", 66.0);
    legend_requests(out, &mut f);
    legend_spans(out, &mut f);
    f.y
}

/// A lifeline's colour and stroke for each state a teammate can be in.
fn legend_states(out: &mut String, f: &mut Flow) {
    for s in LaneState::LEGEND {
        let style = if s.is_gone() { r#" stroke-width="2" stroke-dasharray="2 4""# } else { r#" stroke-width="5""# };
        let (x, y) = f.place(30.0 + s.as_str().chars().count() as f64 * 6.3);
        let _ = writeln!(
            out,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}"{style}/>"#,
            N(x),
            N(y),
            N(x + 18.0),
            N(y),
            state_colour(s)
        );
        text(out, (x + 22.0, y + 4.0), 11.0, "#424242", "start", "", s.as_str());
    }
}

/// Each kind of arrow, and the cross of a lost message.
fn legend_messages(out: &mut String, f: &mut Flow) {
    let arrows: [(&str, &str, &str, &str); 5] = [
        (class_colour(MsgClass::Request), "", "req", "request"),
        (class_colour(MsgClass::Response), "", "resp", "response"),
        (class_colour(MsgClass::Plain), "", "plain", "plain message"),
        (FORGED, r#" stroke-dasharray="7 4""#, "forged", "forged (claims another sender)"),
        ("#9e9e9e", r#" stroke-dasharray="2 3""#, "flight", "in flight at the end"),
    ];
    for (colour, dash, marker, name) in arrows {
        let (x, y) = f.place(42.0 + name.chars().count() as f64 * 6.3);
        let _ = writeln!(
            out,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{colour}" stroke-width="1.6"{dash} marker-end="url(#ah-{marker})"/>"#,
            N(x),
            N(y),
            N(x + 26.0),
            N(y)
        );
        text(out, (x + 30.0, y + 4.0), 11.0, "#424242", "start", "", name);
    }
    let lost = "lost, with its cause";
    let (x, y) = f.place(34.0 + lost.chars().count() as f64 * 6.3);
    let _ = writeln!(
        out,
        r#"<path d="M{},{} L{},{} M{},{} l8,8 M{},{} l8,-8" stroke="{LOST}" stroke-width="2"/>"#,
        N(x),
        N(y),
        N(x + 20.0),
        N(y),
        N(x + 16.0),
        N(y - 4.0),
        N(x + 16.0),
        N(y + 4.0)
    );
    text(out, (x + 30.0, y + 4.0), 11.0, "#424242", "start", "", lost);
}

/// A request bar with its deadline, and the plan gate's two squares.
fn legend_requests(out: &mut String, f: &mut Flow) {
    let words = "a bar from sending to its end (dot), faint on to its deadline (orange tick)";
    let (x, y) = f.place(40.0 + words.chars().count() as f64 * 6.0);
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="9" height="16" fill="{}" stroke="#1565c0"/><rect x="{}" y="{}" width="9" height="10" fill="none" stroke="#9e9e9e" stroke-dasharray="2 3"/><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e65100" stroke-width="2"/>"##,
        N(x),
        N(y - 12.0),
        // A sample bar, in the first protocol's colour.
        Kind::ALL[0].spec().colour,
        N(x + 14.0),
        N(y - 8.0),
        N(x + 12.0),
        N(y + 2.0),
        N(x + 25.0),
        N(y + 2.0)
    );
    text(out, (x + 32.0, y + 4.0), 11.0, "#424242", "start", "", words);
    let (x, y) = f.place(180.0);
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="9" height="9" fill="#c62828" stroke="#c62828" stroke-width="2"/><rect x="{}" y="{}" width="9" height="9" fill="#ffffff" stroke="#2e7d32" stroke-width="2"/>"##,
        N(x),
        N(y - 4.5),
        N(x + 14.0),
        N(y - 4.5)
    );
    text(out, (x + 30.0, y + 4.0), 11.0, "#424242", "start", "", "plan gate closed / open");
}

/// The tinted spans over a lifeline, and the deadlock ring.
fn legend_spans(out: &mut String, f: &mut Flow) {
    let (x, y) = f.place(150.0);
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="12" height="14" fill="#ffccbc" stroke="#e64a19" stroke-dasharray="3 2"/><rect x="{}" y="{}" width="12" height="14" fill="#d7ccc8" stroke="#795548" stroke-dasharray="3 2"/>"##,
        N(x),
        N(y - 7.0),
        N(x + 16.0),
        N(y - 7.0)
    );
    text(out, (x + 34.0, y + 4.0), 11.0, "#424242", "start", "", "crash / stall span");
    let (x, y) = f.place(100.0);
    let _ = writeln!(
        out,
        r##"<rect x="{}" y="{}" width="12" height="14" fill="#e1bee7" stroke="#6a1b9a" stroke-dasharray="3 2"/>"##,
        N(x),
        N(y - 7.0)
    );
    text(out, (x + 18.0, y + 4.0), 11.0, "#424242", "start", "", "partitioned");
    let (x, y) = f.place(150.0);
    let _ = writeln!(
        out,
        r#"<rect x="{}" y="{}" width="12" height="14" fill="{}" stroke="{}" stroke-dasharray="3 2"/>"#,
        N(x),
        N(y - 7.0),
        READING.0,
        READING.1
    );
    text(out, (x + 18.0, y + 4.0), 11.0, "#424242", "start", "", "reading its inbox");
    let stuck = "stuck in a deadlock";
    let (x, y) = f.place(24.0 + stuck.chars().count() as f64 * 6.3);
    let _ = writeln!(
        out,
        r##"<circle cx="{}" cy="{}" r="6" fill="none" stroke="#b71c1c" stroke-width="3"/>"##,
        N(x + 6.0),
        N(y)
    );
    text(out, (x + 18.0, y + 4.0), 11.0, "#424242", "start", "", stuck);
}
