//! Pictures of a finished run, for learners: an SVG sequence diagram (a
//! Lamport diagram on a piecewise time axis) and the same run as Mermaid
//! `sequenceDiagram` text to paste into Markdown.
//!
//! Both are pure functions of an [`Outcome`](crate::world::Outcome): the same run gives
//! the same bytes. They share one layout [`model`] built from the event log
//! (lanes, rows, arrows, marks, spans, request bars); each renderer only
//! draws the model, so a new event kind is one arm in the model builder.
//!
//! ```
//! use handshake::scenario::{load_str, run_scenario, RunOptions};
//! use handshake::view::{mermaid, svg, ViewOptions};
//!
//! let file = r#"
//! name = "stop"
//! about = "The lead asks alice to stop; she does."
//! [[teammate]]
//! name = "alice"
//! [[step]]
//! at = "1s"
//! do = "shutdown"
//! to = "alice"
//! label = "stop-alice"
//! "#;
//! let scenario = load_str("stop.toml", file).unwrap();
//! let mut report = run_scenario(&scenario, 1, RunOptions { keep_outcome: true, ..RunOptions::default() });
//! let outcome = report.outcome.take().unwrap();
//! let opts = ViewOptions::titled("stop");
//! assert!(svg(&outcome, &opts).starts_with("<svg"));
//! assert!(mermaid(&outcome, &opts).contains("p0->>p1: shutdown_request [stop-alice]"));
//! ```

pub mod compare;
pub mod fold;
pub mod html;
pub(crate) mod ink;
mod layout;
mod legend;
pub mod mermaid;
pub mod model;
pub mod page;
pub mod place;
pub mod quiet;
pub mod steps;
pub mod svg;

use crate::protocol::Millis;
use crate::world::Outcome;

/// How to draw a run.
#[derive(Clone, Debug)]
pub struct ViewOptions {
    /// Shown at the top of the picture (the scenario's name, say).
    pub title: Option<String>,
    /// A stretch with no event at least this long is drawn as a fixed-height
    /// break marked "⋯ 1m59s idle ⋯" instead of to scale.
    pub idle_after: Millis,
    /// Mermaid numbers its messages.
    pub autonumber: bool,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions { title: None, idle_after: Millis::from_secs(5), autonumber: false }
    }
}

impl ViewOptions {
    pub fn titled(title: impl Into<String>) -> ViewOptions {
        ViewOptions { title: Some(title.into()), ..ViewOptions::default() }
    }
}

/// An event's sentence as a page lists it: whole up to a few lines, else cut
/// there with its full length said (the trace has it whole). A 1 MiB text
/// broadcast to a thousand teammates made a page of 2 GB.
pub(crate) fn page_sentence(e: &crate::trace::Stamped, names: &crate::trace::Names) -> String {
    const SHOWN: usize = 600;
    let whole = e.sentence(names);
    if whole.len() <= SHOWN {
        return whole;
    }
    format!("{}… ({} bytes in all; the trace has it whole)", crate::words::cut_bytes(&whole, SHOWN), whole.len())
}

/// The run as a standalone SVG document (UTF-8 text).
pub fn svg(outcome: &Outcome, opts: &ViewOptions) -> String {
    svg::render(&model::build(outcome, opts), opts)
}

/// The run as Mermaid `sequenceDiagram` text.
pub fn mermaid(outcome: &Outcome, opts: &ViewOptions) -> String {
    mermaid::render(&model::build(outcome, opts), opts)
}
