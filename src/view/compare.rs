//! "What if": one page with two runs of the same file and seed, the second
//! with one setting changed (`run FILE --html F --compare 'sender_auth=false'`),
//! stepped together by one set of controls, the first event where they part
//! marked in both event lists and named by the stepper.

use super::html::{controls, esc, events, pane, script, verdict, Page, EVENTS_FILTER, FILTER, STYLE};
use crate::world::Outcome;
use std::fmt::Write;

/// One of the two runs: its outcome, what its page would say, and what to call it.
pub struct Side<'a> {
    pub outcome: &'a Outcome,
    pub page: Page<'a>,
    pub heading: &'a str,
}

/// The first event where the two logs differ (in time or in what happened),
/// or where the shorter one ends; `None` when they are the same.
pub fn parted(a: &Outcome, b: &Outcome) -> Option<usize> {
    let same = |k: usize| {
        let (x, y) = (&a.events[k], &b.events[k]);
        x.t == y.t && x.sentence(&a.names) == y.sentence(&b.names)
    };
    let common = a.events.len().min(b.events.len());
    (0..common).find(|&k| !same(k)).or((a.events.len() != b.events.len()).then_some(common))
}

/// The what-if page, as UTF-8 text.
pub fn page(a: &Side, b: &Side, setting: &str) -> String {
    let (ra, rb) = (a.page.report, b.page.report);
    let split = parted(a.outcome, b.outcome);
    let mut out = String::with_capacity(a.page.svg.len() + b.page.svg.len() + 32 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}: what if {}? (seed {})</title><style>{STYLE}</style></head><body>\n",
        esc(&ra.name),
        esc(setting),
        ra.seed
    );
    let _ = writeln!(
        out,
        "<h1>{}: what if <code>{}</code>?</h1><div>seed {} · {}</div>",
        esc(&ra.name),
        esc(setting),
        ra.seed,
        esc(&ra.path)
    );
    if !a.page.about.is_empty() {
        let _ = writeln!(out, "<p class=\"about\">{}</p>", esc(a.page.about));
    }
    let parted_words = match split {
        Some(d) => {
            format!("The two runs agree on {} and part at event {}.", crate::words::plural(d as u64, "event"), d + 1)
        }
        None => "The two runs are the same, event for event: the setting changes nothing in this run.".to_string(),
    };
    let _ = writeln!(
        out,
        "<p>Both runs play the same file with seed {}; the right one with <code>{}</code>. {}</p>",
        ra.seed,
        esc(setting),
        esc(&parted_words)
    );
    out.push_str("<div class=\"two\">");
    for (side, r) in [(a, ra), (b, rb)] {
        let _ = write!(out, "<div><h2>{}</h2>", esc(side.heading));
        verdict(&mut out, r);
        out.push_str("</div>");
    }
    out.push_str("</div>\n");
    super::html::summarised(&mut out, a.outcome);
    super::html::summarised(&mut out, b.outcome);
    let steps = (super::steps::steps(a.outcome), super::steps::steps(b.outcome));
    if let (Some(sa), Some(sb)) = &steps {
        out.push_str("<h2>Step through both</h2>");
        let first = split.map(|d| format!("they part at event {}", d + 1));
        controls(
            &mut out,
            &[("a-", a.heading), ("b-", b.heading)],
            Some(first.as_deref().unwrap_or("the two runs never part")),
        );
        out.push_str("<div class=\"two\"><div>");
        pane(&mut out, "a-", sa);
        out.push_str("</div><div>");
        pane(&mut out, "b-", sb);
        out.push_str("</div></div>\n");
        script(&mut out, &["a-", "b-"], split);
    }
    out.push_str("<h2>The runs</h2><div class=\"two\">");
    for (p, side) in [("a-", a), ("b-", b)] {
        if side.page.svg.len() <= super::html::MAX_PICTURE {
            let _ = write!(out, "<div class=\"picture\" id=\"{p}picture\">{}</div>", side.page.svg);
        } else {
            out.push_str("<div>");
            super::html::picture(&mut out, side.page.svg, p);
            out.push_str("</div>");
        }
    }
    out.push_str("</div>\n");
    let _ = writeln!(out, "<h2>Events</h2>{EVENTS_FILTER}<div class=\"two\">");
    for (p, side) in [("a-", a), ("b-", b)] {
        let _ = write!(out, "<div><b>{}</b>", esc(side.heading));
        events(&mut out, side.outcome, p, split);
        out.push_str("</div>");
    }
    out.push_str("</div>\n<h2>Replay them</h2>");
    for side in [a, b] {
        let _ = writeln!(out, "<p>{}: <code>{}</code></p>", esc(side.heading), esc(side.page.reproduce));
    }
    let _ = writeln!(out, "<script>{FILTER}</script></body></html>");
    out
}
