//! The picture's legend: what each colour, line and shape means, flowing
//! in rows across the top of the page.

use super::ink::{class_colour, state_colour, text, FORGED, LOST, N, READING};
use super::model::{LaneState, MsgClass};
use crate::protocol::Kind;
use std::fmt::Write;

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
pub(super) fn legend(out: &mut String, width: f64) -> f64 {
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
