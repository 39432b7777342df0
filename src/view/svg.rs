//! The model as an SVG Lamport diagram: lanes left to right, virtual time
//! down the page on a piecewise axis (long idle stretches become fixed-height
//! breaks), arrows from send to delivery.

use super::ink::{class_colour, fate_colour, kind_fill, mark_colour, state_colour, text, FORGED, LOST, N, READING};
use super::legend::legend;
use super::model::{Arrow, Bar, Fate, Gap, LaneState, Mark, MarkKind, Model, MsgClass, Role, SpanKind};
use super::place::{self, Placer, Rect, Spot};
use super::ViewOptions;

pub use super::ink::escape;
use crate::protocol::GateState;
use std::fmt::Write;

const LEFT: f64 = 100.0;
const SLOT: f64 = 13.0;
const TEXT_W: f64 = 230.0;
const HEAD: f64 = 150.0;
const NAME_H: f64 = 24.0;
const FONT: &str = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif";

/// Where everything sits on the page.
#[derive(Clone)]
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

/// Where everything sits, once every label has found a place: rows where a
/// label found none move down, a little at a time, until each has one.
pub fn geometry(m: &Model) -> Geometry {
    laid_out(m, &ViewOptions::default()).0
}

/// How many times a crowded page grows its rows before it is drawn as it is.
const GROWTH: usize = 8;

/// The geometry and the picture drawn on it, rows grown where labels were
/// crowded.
fn laid_out(m: &Model, opts: &ViewOptions) -> (Geometry, String) {
    let mut room = vec![0.0; m.rows.len()];
    let g = rows_geometry(m, &room);
    let (doc, mut crowded) = draw(m, opts, &g);
    let mut best = (g, doc, crowded.len());
    // Growing helps only where rows are too close: it stops as soon as a
    // round leaves as many labels without a place as the one before.
    for _ in 0..GROWTH {
        if crowded.is_empty() {
            break;
        }
        for &r in &crowded {
            room[r] += 16.0;
            if let Some(next) = room.get_mut(r + 1) {
                *next += 8.0;
            }
        }
        let g = rows_geometry(m, &room);
        let (doc, now) = draw(m, opts, &g);
        if now.len() >= best.2 {
            break;
        }
        best = (g, doc, now.len());
        crowded = now;
    }
    (best.0, best.1)
}

/// Where everything sits with `room` more pixels above each row.
fn rows_geometry(m: &Model, room: &[f64]) -> Geometry {
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
            need[a.end].push((a.sent, 32.0 + 13.0 * lines as f64));
        }
    }
    let width = (cursor + 10.0).max(1000.0);
    // Laid out once to measure it; the picture draws it again.
    let head = HEAD.max(legend(&mut String::new(), width) + 26.0);
    let mut y: Vec<f64> = Vec::with_capacity(m.rows.len());
    let mut at = head + NAME_H + 26.0;
    for (i, r) in m.rows.iter().enumerate() {
        at += gap_height(r.gap) + room[i];
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
        shown = format!("{}…", place::fitting_prefix(s, size, room));
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

/// The labels, drawn over every line and shape once all are placed: a
/// label the placer put on a card gets one first, a white box that hides
/// the lines under it.
#[derive(Default)]
struct Labels {
    out: String,
    cards: usize,
    /// The rows of labels that found no place.
    crowded: Vec<usize>,
}

impl Labels {
    fn card(&mut self, r: &Rect) {
        self.cards += 1;
        let _ = writeln!(
            self.out,
            r##"<rect id="plate-{}" x="{}" y="{}" width="{}" height="{}" rx="2" fill="#ffffff"/>"##,
            self.cards,
            N(r.x0),
            N(r.y0),
            N(r.x1 - r.x0),
            N(r.y1 - r.y0)
        );
    }

    /// One label where the placer put it, for row `row`.
    fn one(&mut self, f: &Fitted, fill: &str, spot: Spot, row: usize) {
        self.stands(spot, row, &f.rect);
        self.draw(f, fill);
    }

    /// What the placer said of a label of row `row` at `r`: a card under
    /// it if it stands on a line, and its row kept if it found no place.
    fn stands(&mut self, spot: Spot, row: usize, r: &Rect) {
        if spot == Spot::Crowded {
            self.crowded.push(row);
        }
        if spot.carded() {
            self.card(r);
        }
    }

    fn draw(&mut self, f: &Fitted, fill: &str) {
        match &f.whole {
            None => text(&mut self.out, f.at, f.size, fill, f.anchor, r#" class="halo""#, &f.shown),
            Some(whole) => {
                let _ = writeln!(
                    self.out,
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

/// The page's breaks (time left out), in order down the page, less those
/// an arrow spans: no label stands in one, but an arrow's own label may
/// stand in a break its arrow crosses.
#[derive(Clone, Copy)]
struct Breaks<'a> {
    all: &'a [Rect],
    /// The indices of the breaks spanned, `from..to`.
    spanned: (usize, usize),
}

impl<'a> Breaks<'a> {
    fn new(all: &'a [Rect]) -> Breaks<'a> {
        Breaks { all, spanned: (0, 0) }
    }

    /// The same, less the breaks between heights `top` and `bottom`.
    fn spanned_by(self, top: f64, bottom: f64) -> Breaks<'a> {
        let from = self.all.partition_point(|b| b.y0 <= top);
        let to = self.all.partition_point(|b| b.y1 < bottom).max(from);
        Breaks { all: self.all, spanned: (from, to) }
    }

    /// Whether `r` stands in a break not spanned. The breaks are in order
    /// down the page: only those whose bottom is below `r`'s top are looked at.
    fn meet(&self, r: &Rect) -> bool {
        let first = self.all.partition_point(|b| b.y1 <= r.y0);
        self.all[first..]
            .iter()
            .enumerate()
            .take_while(|(_, b)| b.y0 < r.y1)
            .any(|(i, b)| !(self.spanned.0..self.spanned.1).contains(&(first + i)) && b.meets(r))
    }
}

/// The picture, drawn as layers from back to front: the page's ruling,
/// then every line and shape, each kept by the placer as something labels
/// keep off (a line) or may not cover (a shape), then the labels over them
/// all, so nothing drawn later strikes a label through.
pub fn render(m: &Model, opts: &ViewOptions) -> String {
    laid_out(m, opts).1
}

/// The picture on `g`, and the rows of labels that found no place.
fn draw(m: &Model, opts: &ViewOptions, g: &Geometry) -> (String, Vec<usize>) {
    let g = g.clone();
    let last = m.rows.len() - 1;
    let bottom = g.y[last] + 16.0;
    let c = Canvas { m, g, last, bottom };
    let mut out = String::with_capacity(4096 + 400 * (m.arrows.len() + m.marks.len()));
    document_start(&mut out, &c.g);
    heading(&mut out, m, opts);
    legend(&mut out, c.g.width);

    let mut placer = Placer::default();
    time_axis(&mut out, &c);
    spans(&mut out, &mut placer, &c);
    lifelines(&mut out, &mut placer, &c);
    request_bars(&mut out, &mut placer, &c);
    let lines: Vec<Line> = c.m.arrows.iter().map(|a| arrow_line(&mut out, &mut placer, &c, a)).collect();
    glyphs(&mut out, &mut placer, &c);

    // The fixed labels first, then those that move: a mark's words, then
    // the arrows' labels, which find room around them.
    let mut labels = Labels::default();
    for (i, lane) in m.lanes.iter().enumerate() {
        placer.take(place::text_box((c.g.x[i], bottom + 20.0), 11.0, "middle", &foot(lane)));
    }
    let breaks = time_labels(&mut labels, &mut placer, &c);
    bar_captions(&mut labels, &mut placer, &c);
    mark_words(&mut labels, &mut placer, &c, Breaks::new(&breaks));
    for (a, line) in m.arrows.iter().zip(&lines) {
        let others = Breaks::new(&breaks).spanned_by(line.from.1, line.to.1);
        arrow_label(&mut labels, &mut placer, &c, a, line, others);
        if let Fate::Lost(cause) = a.fate {
            lost_words(&mut labels, &mut placer, c.g.width, line, cause, a.end);
        }
    }
    out.push_str(&labels.out);
    names(&mut out, &c);
    out.push_str("</svg>\n");
    (out, labels.crowded)
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

/// Behind everything: a faint line at each row, and a shaded break where
/// idle time or uneventful work was left out (the page's ruling: labels
/// stand on it as on ruled paper).
fn time_axis(out: &mut String, c: &Canvas) {
    for (i, r) in c.m.rows.iter().enumerate() {
        let y = c.g.y[i];
        match r.gap {
            Gap::Idle(_) | Gap::Folded { .. } => {
                let top = c.g.y[i - 1] + 8.0;
                let _ = writeln!(
                    out,
                    r##"<rect x="8" y="{}" width="{}" height="{}" fill="#f3f3f3" stroke="#bdbdbd" stroke-dasharray="4 3"/>"##,
                    N(top),
                    N(c.g.width - 16.0),
                    N(y - top - 8.0)
                );
            }
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
    }
}

/// The time at each row, left of the lanes, and what each break leaves
/// out, repeated along a wide page so it is seen wherever one looks (a
/// repeat that would cover a shape is left out). Returns where the breaks
/// are: time left out is no place for what happened before or after it,
/// only for an arrow that spans it.
fn time_labels(labels: &mut Labels, placer: &mut Placer, c: &Canvas) -> Vec<Rect> {
    let mut breaks = Vec::new();
    for (i, r) in c.m.rows.iter().enumerate() {
        let y = c.g.y[i];
        match r.gap {
            Gap::Idle(_) | Gap::Folded { .. } => {
                let top = c.g.y[i - 1] + 8.0;
                let label = r.gap.break_words().unwrap_or_default();
                let mid = (top + y - 8.0) / 2.0 + 4.0;
                let mut x = LEFT + 400.0;
                let mut at = vec![fit((14.0, mid), 11.0, "start", &label, c.g.width)];
                while x < c.g.width - 200.0 {
                    at.push(fit((x, mid), 11.0, "middle", &label, c.g.width));
                    x += 900.0;
                }
                for (n, f) in at.iter().enumerate() {
                    let spot = if n == 0 { placer.choose(&[f.rect]).1 } else { placer.try_take(&f.rect) };
                    if spot != Spot::Crowded {
                        labels.one(f, if n == 0 { "#757575" } else { "#9e9e9e" }, spot, i);
                    }
                }
                breaks.push(Rect { x0: 8.0, y0: top, x1: c.g.width - 8.0, y1: y - 8.0 });
            }
            Gap::Same => continue,
            _ => {}
        }
        text(&mut labels.out, (LEFT - 8.0, y + 4.0), 11.0, "#616161", "end", "", &r.t.to_string());
        placer.take(place::text_box((LEFT - 8.0, y + 4.0), 11.0, "end", &r.t.to_string()));
    }
    breaks
}

/// Crash, stall, partition and reading spans: a tinted box over the
/// lifeline, which no label covers.
fn spans(out: &mut String, placer: &mut Placer, c: &Canvas) {
    for s in &c.m.spans {
        let x = c.g.x[s.lane];
        let (top, bot) = (c.g.y[s.from], if s.open { c.bottom } else { c.g.y[s.to] });
        let (fill, stroke) = match s.kind {
            SpanKind::Crash => ("#ffccbc", "#e64a19"),
            SpanKind::Stall => ("#d7ccc8", "#795548"),
            SpanKind::Partition => ("#e1bee7", "#6a1b9a"),
            SpanKind::Reading => READING,
        };
        let height = (bot - top).max(2.0);
        let _ = writeln!(
            out,
            r#"<rect x="{}" y="{}" width="24" height="{}" fill="{fill}" fill-opacity="0.6" stroke="{stroke}" stroke-dasharray="3 2"><title>{}</title></rect>"#,
            N(x - 12.0),
            N(top),
            N(height),
            escape(&s.text)
        );
        placer.take(Rect { x0: x - 12.5, y0: top - 0.5, x1: x + 12.5, y1: top + height + 0.5 });
    }
}

/// Lifelines: a thin base line, then the states as coloured segments.
fn lifelines(out: &mut String, placer: &mut Placer, c: &Canvas) {
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
        placer.line((x, g.head + NAME_H), (x, c.bottom), 2.5);
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

/// Where a bar's end state is drawn: at least a little below its start.
fn bar_end(c: &Canvas, b: &Bar) -> f64 {
    c.g.y[b.end].max(c.g.y[b.from] + 4.0)
}

/// Request bars on the requester's lifeline, left of it.
fn request_bars(out: &mut String, placer: &mut Placer, c: &Canvas) {
    for b in &c.m.bars {
        request_bar(out, placer, c, b);
    }
}

/// One request: a bar from sending to its end state (a dot in the colour of
/// its fate), then a faint outline on to its deadline (an orange tick), or
/// to an arrowhead at the bottom when the deadline falls after the end.
fn request_bar(out: &mut String, placer: &mut Placer, c: &Canvas, b: &Bar) {
    let g = &c.g;
    let x = bar_x(c, b);
    let top = g.y[b.from];
    let end = bar_end(c, b);
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
        for (a, b) in [
            ((x, end), (x, reach)),
            ((x + SLOT - 3.0, end), (x + SLOT - 3.0, reach)),
            ((x, reach), (x + SLOT - 3.0, reach)),
        ] {
            placer.line(a, b, 0.5);
        }
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
    placer.take(Rect { x0: x - 0.5, y0: top - 0.5, x1: x + SLOT - 2.5, y1: end + 0.5 });
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
        placer.take(Rect { x0: x - 2.0, y0: y - 1.0, x1: x + SLOT - 1.0, y1: y + 1.0 });
    } else {
        let _ = writeln!(out, r##"<path d="M{},{} l-4,-6 h8 z" fill="#9e9e9e"/>"##, N(cx), N(reach));
        placer.take(Rect { x0: cx - 4.0, y0: reach - 6.0, x1: cx + 4.0, y1: reach });
    }
    let _ = writeln!(
        out,
        r#"<circle cx="{}" cy="{}" r="4" fill="{}"><title>{}</title></circle>"#,
        N(cx),
        N(end),
        fate_colour(b.fate),
        escape(&tip)
    );
    placer.take(Rect { x0: cx - 4.5, y0: end - 4.5, x1: cx + 4.5, y1: end + 4.5 });
}

/// The captions of bars whose opening no words beside the lifeline tell,
/// written down inside their own bar, cut to its length (the whole caption
/// is in the bar's tooltip).
fn bar_captions(labels: &mut Labels, placer: &mut Placer, c: &Canvas) {
    for b in c.m.bars.iter().filter(|b| !b.told) {
        let x = bar_x(c, b);
        let (tx, ty) = (x + 1.5, c.g.y[b.from] + 3.0);
        let room = bar_end(c, b) - 3.0 - ty;
        let mut caption = format!("{} · {}", b.label, b.deadline.as_deadline());
        if place::width(&caption, 8.0) > room {
            let cut = place::fitting_prefix(&caption, 8.0, room);
            if cut.chars().nth(1).is_none() {
                continue;
            }
            caption = format!("{cut}…");
        }
        placer.take(Rect { x0: x - 2.0, y0: ty, x1: x + SLOT - 1.0, y1: ty + place::width(&caption, 8.0) });
        let _ = writeln!(
            labels.out,
            r##"<text x="{}" y="{}" font-size="8" fill="#0d47a1" transform="rotate(90 {} {})">{}</text>"##,
            N(tx),
            N(ty),
            N(tx),
            N(ty),
            escape(&caption)
        );
    }
}

/// Each mark's words: notes across the page first, then words beside
/// lifelines, each on the first side and height where they meet nothing.
fn mark_words(labels: &mut Labels, placer: &mut Placer, c: &Canvas, breaks: Breaks) {
    let g = &c.g;
    for mk in c.m.marks.iter().filter(|mk| mk.lane.is_none()) {
        let y = g.y[mk.row];
        let words = format!("note: {}", mk.text);
        let half = words.chars().count().div_ceil(2) + 1;
        let mut options: Vec<Vec<Fitted>> = Vec::new();
        // From the left edge, the right edge or beside any lifeline, just
        // above the note's line, then below it, then further away; then
        // the same on two lines.
        for lines in [vec![words.clone()], place::wrap(&words, half)] {
            for dy in [-5.0, 13.0, -16.0, 24.0, -27.0, 35.0] {
                let first = if dy < 0.0 { y + dy - 12.0 * (lines.len() as f64 - 1.0) } else { y + dy };
                let starts = [(LEFT + 6.0, "start"), (g.width - 12.0, "end")].into_iter();
                for (x, anchor) in starts.chain(g.x.iter().map(|&x| (x + 8.0, "start"))) {
                    options.push(stacked(&lines, (x, first), anchor, g.width));
                }
            }
        }
        place_block(labels, placer, options, breaks, mark_colour(mk.kind), mk.row);
    }
    for mk in c.m.marks.iter() {
        if let Some(lane) = mk.lane.filter(|_| mk.kind != MarkKind::FileStep) {
            lane_words(labels, placer, c, breaks, mk, lane);
        }
    }
}

/// A mark's words beside its lifeline: on one line at several heights on
/// either side, then clear of a span over the lifeline, then on two lines.
fn lane_words(labels: &mut Labels, placer: &mut Placer, c: &Canvas, breaks: Breaks, mk: &Mark, lane: usize) {
    let g = &c.g;
    let (x, y) = (g.x[lane], g.y[mk.row]);
    // A refused send's stub points right unless its target is to the left.
    let stub_right = mk.kind == MarkKind::Refused && !mk.toward.is_some_and(|t| g.x[t] < x);
    let dx = if stub_right { 36.0 } else { 8.0 };
    // Words that would run off the right edge start left of the lifeline.
    let fits = x + dx + place::width(&mk.text, 10.5) <= g.width - EDGE;
    // Left of the lifeline, words end left of the lane's request bars.
    let slots = c.m.lanes[lane].slots as f64;
    let left = if slots > 0.0 { x - 14.0 - slots * SLOT } else { x - 10.0 };
    let sides = if fits { [(x + dx, "start"), (left, "end")] } else { [(left, "end"), (x + dx, "start")] };
    let half = mk.text.chars().count().div_ceil(2) + 1;
    let mut options: Vec<Vec<Fitted>> = Vec::new();
    for (lines, ex) in [(vec![mk.text.clone()], 0.0), (vec![mk.text.clone()], 8.0), (place::wrap(&mk.text, half), 0.0)]
    {
        for dy in [0.0, -9.0, 9.0, -18.0, 18.0, -27.0, 27.0, -36.0, 36.0] {
            for (tx, anchor) in sides {
                let tx = if anchor == "start" { tx + ex } else { tx - ex };
                let top = y + 4.0 + dy - 6.0 * (lines.len() as f64 - 1.0);
                options.push(stacked(&lines, (tx, top), anchor, g.width));
            }
        }
    }
    place_block(labels, placer, options, breaks, mark_colour(mk.kind), mk.row);
}

/// A mark's words as lines 12 px apart, the first at `at`.
fn stacked(lines: &[String], (x, y): (f64, f64), anchor: &'static str, width: f64) -> Vec<Fitted> {
    lines.iter().enumerate().map(|(i, l)| fit((x, y + 12.0 * i as f64), 10.5, anchor, l, width)).collect()
}

/// Keeps the places (`options`, with their `boxes`) that stand in no break;
/// where every one does (a row between two breaks), keeps them all: a
/// label in a break rather than none.
fn out_of_breaks<O, B>(options: &mut Vec<O>, boxes: &mut Vec<B>, rect: impl Fn(&B) -> &Rect, breaks: Breaks) {
    let keep: Vec<bool> = boxes.iter().map(|b| !breaks.meet(rect(b))).collect();
    if keep.contains(&true) {
        let mut k = keep.iter();
        options.retain(|_| k.next().copied().unwrap_or(false));
        let mut k = keep.iter();
        boxes.retain(|_| k.next().copied().unwrap_or(false));
    }
}

/// Lines that move together, placed at the first of `options` that meets
/// nothing (none that stands in a break), for row `row`.
fn place_block(
    labels: &mut Labels,
    placer: &mut Placer,
    mut options: Vec<Vec<Fitted>>,
    breaks: Breaks,
    colour: &str,
    row: usize,
) {
    let mut boxes: Vec<Rect> = options.iter().map(|o| block(o)).collect();
    out_of_breaks(&mut options, &mut boxes, |r| r, breaks);
    let (pick, spot) = placer.choose(&boxes);
    labels.stands(spot, row, &boxes[pick]);
    for line in &options[pick] {
        labels.draw(line, colour);
    }
}

/// Where an arrow was drawn: its label and its cross are placed along it.
struct Line {
    from: (f64, f64),
    to: (f64, f64),
    /// 1 when it points right, -1 when it points left.
    dir: f64,
    colour: &'static str,
}

impl Line {
    /// The arrow's height at `x` (clamped to its ends).
    fn y_at(&self, x: f64) -> f64 {
        let ((x1, y1), (x2, y2)) = (self.from, self.to);
        if (x2 - x1).abs() < f64::EPSILON {
            return y1;
        }
        let f = ((x - x1) / (x2 - x1)).clamp(0.0, 1.0);
        y1 + (y2 - y1) * f
    }

    /// How far to move a label's box `r` down (or up, when negative) so
    /// that it stands just above the arrow (`above`) or just below it.
    fn clear(&self, r: &Rect, above: bool) -> f64 {
        let (a, b) = (self.y_at(r.x0), self.y_at(r.x1));
        if above {
            a.min(b) - 2.0 - r.y1
        } else {
            a.max(b) + 2.0 - r.y0
        }
    }
}

/// The arrow itself, coloured and dashed by what the message is and what
/// became of it, with everything about it in its tooltip; and a red cross
/// where it was lost.
fn arrow_line(out: &mut String, placer: &mut Placer, c: &Canvas, a: &Arrow) -> Line {
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
    let lost = matches!(a.fate, Fate::Lost(_));
    let head = if lost { String::new() } else { format!(r#" marker-end="url(#ah-{marker})""#) };
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
    placer.line((x1, y1), (x2, y2), 0.8);
    if lost {
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
        placer.take(Rect { x0: x2 - 7.0, y0: y2 - 7.0, x1: x2 + 7.0, y1: y2 + 7.0 });
    } else {
        // The arrowhead: 8 units of a 1.6-wide stroke, back from the tip.
        let (bx, by) = (x2 - dir * 6.5, (y2 + line_y(x1, y1, x2, y2, x2 - dir * 13.0)) / 2.0);
        placer.take(Rect { x0: bx - 7.0, y0: by - 7.0, x1: bx + 7.0, y1: by + 7.0 });
    }
    Line { from: (x1, y1), to: (x2, y2), dir, colour }
}

/// The height at `x` of the line from `(x1, y1)` to `(x2, y2)`.
fn line_y(x1: f64, y1: f64, x2: f64, y2: f64, x: f64) -> f64 {
    if (x2 - x1).abs() < f64::EPSILON {
        y1
    } else {
        y1 + (y2 - y1) * (x - x1) / (x2 - x1)
    }
}

/// An arrow's label: its words (wrapped, above), its type and request, and
/// what faults did to it (below). It stands just above or below the arrow,
/// at its middle or near its start when the arrow is long, so a fan-out
/// keeps its labels apart; where that would meet another label or a line
/// it slides along the arrow, then away from it; and where no place is
/// clear it stands on the arrow, on a card.
fn arrow_label(labels: &mut Labels, placer: &mut Placer, c: &Canvas, a: &Arrow, line: &Line, breaks: Breaks) {
    let ((x1, y1), (x2, y2)) = (line.from, line.to);
    let along: &[f64] = if (x2 - x1).abs() > 2.0 * TEXT_W {
        &[0.25, 0.2, 0.3, 0.15, 0.35, 0.4, 0.45, 0.55, 0.65, 0.75]
    } else {
        &[0.5, 0.45, 0.55, 0.4, 0.6, 0.35, 0.65, 0.3, 0.7, 0.25, 0.75, 0.15, 0.85]
    };
    let extra = a.notes.iter().filter(|n| !n.starts_with('✕')).count() as f64;
    let mut label = a.text.clone();
    if let Some(who) = &a.forged_as {
        label = format!("FORGED as {who}: {label}");
    }
    let place_at = |f: f64, dy: f64, with_words: bool| {
        let at = (x1 + (x2 - x1) * f, y1 + (y2 - y1) * f + 4.0 - 5.5 * extra + dy);
        label_lines(a, &label, at, with_words, line.colour, c.g.width)
    };
    let boxed = |o: &Vec<(Fitted, &'static str)>| block(&o.iter().map(|l| l.0.clone()).collect::<Vec<_>>());
    // Each place with whether it may stand on the arrow, on a card: beside
    // the arrow first, above it, then below; then on it; then further away
    // beside it; then the same without the words, which are in the
    // arrow's tooltip.
    let mut options: Vec<(Vec<(Fitted, &'static str)>, bool)> = Vec::new();
    for with_words in [true, false] {
        for away in [0.0, f64::NAN, 12.0, 24.0] {
            for &f in along {
                if away.is_nan() {
                    options.push((place_at(f, 0.0, with_words), true));
                    continue;
                }
                for above in [true, false] {
                    let on = place_at(f, 0.0, with_words);
                    let dy = line.clear(&boxed(&on), above) + if above { -away } else { away };
                    options.push((place_at(f, dy, with_words), false));
                }
            }
        }
    }
    let mut boxes: Vec<(Rect, bool)> = options.iter().map(|(o, card)| (boxed(o), *card)).collect();
    out_of_breaks(&mut options, &mut boxes, |b| &b.0, breaks);
    let (pick, spot) = placer.choose_in_order(&boxes);
    labels.stands(spot, a.end, &boxes[pick].0);
    let options: Vec<Vec<(Fitted, &'static str)>> = options.into_iter().map(|o| o.0).collect();
    for (fitted, fill) in &options[pick] {
        labels.draw(fitted, fill);
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

/// A lost message's cause, beside its cross on the first side that meets
/// nothing.
fn lost_words(
    labels: &mut Labels,
    placer: &mut Placer,
    width: f64,
    line: &Line,
    cause: crate::trace::Cause,
    row: usize,
) {
    let ((x2, y2), dir) = (line.to, line.dir);
    let (near, far) = if dir > 0.0 { ("end", "start") } else { ("start", "end") };
    let words = format!("✕ lost: {}", cause.as_str());
    let mut options = Vec::new();
    for dy in [14.0, -9.0, 25.0, -20.0, 36.0] {
        options.push(fit((x2 - dir * 9.0, y2 + dy), 10.0, near, &words, width));
        options.push(fit((x2 + dir * 9.0, y2 + dy), 10.0, far, &words, width));
    }
    let (pick, spot) = placer.choose(&options.iter().map(|o| o.rect).collect::<Vec<_>>());
    labels.one(&options[pick], LOST, spot, row);
}

/// Marks' shapes: a glyph on the lifeline, or a dotted line across the
/// page for a note about the whole run.
fn glyphs(out: &mut String, placer: &mut Placer, c: &Canvas) {
    for mk in &c.m.marks {
        let y = c.g.y[mk.row];
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
                placer.line((LEFT, y), (c.g.width - 8.0, y), 0.5);
            }
            Some(lane) => glyph(out, placer, c, mk, (c.g.x[lane], y), mark_colour(mk.kind)),
        }
    }
}

/// A mark's shape on its lifeline at `(x, y)`: a tick for a file step, a
/// square for the plan gate (hollow when open), a stub for a refused send,
/// a ring for a deadlock, a filled square for a stop or crash, else a dot.
fn glyph(out: &mut String, placer: &mut Placer, c: &Canvas, mk: &Mark, (x, y): (f64, f64), colour: &str) {
    let reach = match mk.kind {
        MarkKind::FileStep => {
            let _ = writeln!(
                out,
                r##"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#607d8b"><title>{}</title></line>"##,
                N(x - 5.0),
                N(y),
                N(x + 5.0),
                N(y),
                escape(&mk.text)
            );
            placer.line((x - 5.0, y), (x + 5.0, y), 0.5);
            return;
        }
        MarkKind::Gate(state) => {
            let fill = if matches!(state, GateState::Approved | GateState::NotRequired) { "#ffffff" } else { colour };
            let _ = writeln!(
                out,
                r#"<rect x="{}" y="{}" width="9" height="9" fill="{fill}" stroke="{colour}" stroke-width="2"/>"#,
                N(x - 4.5),
                N(y - 4.5)
            );
            5.5
        }
        MarkKind::Refused => {
            let dir = match mk.toward {
                Some(t) if c.g.x[t] < x => -1.0,
                _ => 1.0,
            };
            let end = x + dir * 30.0;
            let _ = writeln!(
                out,
                r#"<path d="M{},{} L{},{} M{},{} v12" stroke="{colour}" stroke-width="2" fill="none"/>"#,
                N(x),
                N(y),
                N(end),
                N(y),
                N(end),
                N(y - 6.0)
            );
            placer.line((x, y), (end, y), 1.0);
            placer.line((end, y - 6.0), (end, y + 6.0), 1.0);
            return;
        }
        // A ring: the cycle, drawn where each member is stuck.
        MarkKind::Deadlock | MarkKind::DeadlockBroken => {
            let _ = writeln!(
                out,
                r#"<circle cx="{}" cy="{}" r="6" fill="none" stroke="{colour}" stroke-width="3"/>"#,
                N(x),
                N(y)
            );
            7.5
        }
        MarkKind::Stopped | MarkKind::Crash => {
            let _ = writeln!(
                out,
                r#"<rect x="{}" y="{}" width="10" height="10" fill="{colour}"/>"#,
                N(x - 5.0),
                N(y - 5.0)
            );
            5.0
        }
        _ => {
            let _ = writeln!(out, r##"<circle cx="{}" cy="{}" r="4" fill="{colour}" stroke="#ffffff"/>"##, N(x), N(y));
            4.5
        }
    };
    placer.take(Rect { x0: x - reach, y0: y - reach, x1: x + reach, y1: y + reach });
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
