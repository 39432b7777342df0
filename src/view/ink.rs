//! The picture's ink: its colours, its coordinates and its text as the SVG
//! writes them, shared by the diagram (`svg`) and its legend (`legend`).

use super::model::{BarEnd, LaneState, MarkKind, MsgClass};
use crate::protocol::{GateState, Kind};
use std::fmt::Write;

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
pub(super) struct N(pub(super) f64);

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

pub(super) fn class_colour(c: MsgClass) -> &'static str {
    match c {
        MsgClass::Request => "#1565c0",
        MsgClass::Response => "#00796b",
        MsgClass::Plain => "#546e7a",
    }
}

pub(super) const FORGED: &str = "#d81b60";
/// A read of an inbox file: the span's fill and its outline.
pub(super) const READING: (&str, &str) = ("#b3e5fc", "#0277bd");
pub(super) const LOST: &str = "#d50000";

pub(super) fn mark_colour(k: MarkKind) -> &'static str {
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

pub(super) fn fate_colour(f: BarEnd) -> &'static str {
    match f {
        BarEnd::Approved => "#2e7d32",
        BarEnd::Rejected => "#c62828",
        BarEnd::Expired(_) => "#e65100",
        BarEnd::Pending => "#9e9e9e",
    }
}

pub(super) fn kind_fill(k: Kind) -> &'static str {
    k.spec().colour
}

pub(super) fn text(out: &mut String, (x, y): (f64, f64), size: f64, fill: &str, anchor: &str, extra: &str, s: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="{}" fill="{fill}" text-anchor="{anchor}"{extra}>{}</text>"#,
        N(x),
        N(y),
        N(size),
        escape(s)
    );
}
