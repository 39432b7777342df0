//! One self-contained HTML page for a run: what the scenario teaches, the
//! verdict in words, the picture, every request in a table, the event list
//! with a filter, and the command that replays it. No network: the SVG is
//! inline, the style and the filter's few lines of script are in the page.

use crate::protocol::{Millis, RequestId, Status};
use crate::scenario::Report;
use crate::trace::Event;
use crate::world::Outcome;
use std::fmt::Write;

/// What the page says about the run besides the outcome itself.
pub struct Page<'a> {
    pub about: &'a str,
    pub report: &'a Report,
    /// The command that replays this run, as the report prints it.
    pub reproduce: &'a str,
    /// The run's picture (`view::svg`).
    pub svg: &'a str,
}

/// HTML text and attribute values: the XML escaping the SVG uses serves here too.
fn esc(s: &str) -> String {
    super::svg::escape(s)
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#212121;max-width:none}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}\
.about{white-space:pre-wrap;max-width:80ch;color:#37474f}\
.verdict{display:inline-block;padding:6px 12px;border-radius:4px;font-weight:bold;margin:12px 0}\
.pass{background:#e8f5e9;color:#1b5e20}.fail{background:#ffebee;color:#b71c1c}\
table{border-collapse:collapse}td,th{border-bottom:1px solid #e0e0e0;padding:3px 10px;text-align:left;vertical-align:top}\
th{background:#f5f5f5}.t{font-variant-numeric:tabular-nums;text-align:right;white-space:nowrap;color:#546e7a}\
.picture{overflow:auto;border:1px solid #e0e0e0;max-height:80vh}\
code{background:#f5f5f5;padding:2px 6px;border-radius:3px}\
#events.protocol-only tr.work{display:none}";

const FILTER: &str = "function only(p){document.getElementById('events').classList.toggle('protocol-only',p)}";

/// The page, as UTF-8 text.
pub fn html(outcome: &Outcome, page: &Page) -> String {
    let r = page.report;
    let mut out = String::with_capacity(page.svg.len() + 16 * 1024);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{} (seed {})</title><style>{STYLE}</style></head><body>\n",
        esc(&r.name),
        r.seed
    );
    let _ = writeln!(out, "<h1>{}</h1><div>seed {} · {}</div>", esc(&r.name), r.seed, esc(&r.path));
    if !page.about.is_empty() {
        let _ = writeln!(out, "<p class=\"about\">{}</p>", esc(page.about));
    }
    verdict(&mut out, r);
    let _ = writeln!(out, "<h2>The run</h2><div class=\"picture\">{}</div>", page.svg);
    requests(&mut out, outcome);
    events(&mut out, outcome);
    let _ = writeln!(out, "<h2>Replay it</h2><p><code>{}</code></p>", esc(page.reproduce));
    let _ = writeln!(out, "<script>{FILTER}</script></body></html>");
    out
}

fn verdict(out: &mut String, r: &Report) {
    let c = &r.counts;
    let (class, word) = if r.passed { ("pass", "PASS") } else { ("fail", "FAIL") };
    let _ = write!(out, "<div class=\"verdict {class}\">{word}</div>");
    match r.failures.first() {
        Some(f) => {
            let _ = write!(out, " <b>{}</b> — {} (at {})", esc(&f.check), esc(&f.message), Millis(f.at_ms));
            if r.failures.len() > 1 {
                let _ = write!(out, " and {} more", r.failures.len() - 1);
            }
        }
        None => out.push_str(" every invariant held and every expectation was met"),
    }
    let n = |count: usize, one: &str, many: &str| format!("{count} {}", if count == 1 { one } else { many });
    let _ = writeln!(
        out,
        "<p>{} · {} · {} ignored · {} expired · {} refused · {} lost · {} · {} virtual, stopped: {}</p>",
        n(c.messages, "message", "messages"),
        n(c.handshakes, "handshake", "handshakes"),
        c.ignored,
        c.expired,
        c.refused,
        c.lost,
        n(c.deadlocks, "deadlock", "deadlocks"),
        Millis(r.virtual_ms),
        r.stopped_by
    );
    for d in &r.deadlocks {
        let end = match (d.broken_ms, &d.broken_by) {
            (Some(at), Some(by)) => format!("broken at {} by [{}]", Millis(at), esc(by)),
            _ => "still deadlocked at the end".to_string(),
        };
        let _ = writeln!(out, "<p>⟳ deadlock {} from {}: {end}</p>", esc(&d.cycle()), Millis(d.formed_ms));
    }
}

/// When and why each request reached its end state, from the log.
fn endings(o: &Outcome) -> std::collections::BTreeMap<RequestId, (Millis, String)> {
    let mut out = std::collections::BTreeMap::new();
    for e in &o.events {
        match &e.event {
            Event::Verdict { request_id, sender, verdict: crate::protocol::Verdict::Applied { .. }, .. } => {
                out.insert(*request_id, (e.t, format!("answered by {}", o.names.agent(*sender))));
            }
            Event::Expired { id, default, .. } => {
                out.insert(*id, (e.t, format!("deadline passed: default {}", default.as_str())));
            }
            _ => {}
        }
    }
    out
}

fn requests(out: &mut String, o: &Outcome) {
    let _ = writeln!(out, "<h2>Requests</h2>");
    if o.requests.is_empty() {
        out.push_str("<p>No request was made.</p>\n");
        return;
    }
    out.push_str(
        "<table><tr><th>label</th><th>kind</th><th>from → to</th><th>sent</th><th>deadline</th>\
         <th>end state</th><th>at</th><th>why</th></tr>\n",
    );
    let ends = endings(o);
    for q in &o.requests {
        let label = o.names.label(q.id).map_or_else(|| q.id.to_string(), str::to_string);
        let deadline = if q.deadline.is_never() { "none".to_string() } else { q.deadline.to_string() };
        let (at, why) = match ends.get(&q.id) {
            Some((t, why)) => (t.to_string(), why.clone()),
            None if q.status == Status::Pending => ("—".into(), "still pending when the run stopped".into()),
            None => ("—".into(), String::new()),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{} → {}</td><td class=\"t\">{}</td><td class=\"t\">{}</td>\
             <td>{}</td><td class=\"t\">{}</td><td>{}</td></tr>",
            esc(&label),
            q.kind,
            esc(o.names.agent(q.requester)),
            esc(o.names.agent(q.target)),
            q.sent_at,
            deadline,
            q.status,
            at,
            esc(&why)
        );
    }
    out.push_str("</table>\n");
}

fn events(out: &mut String, o: &Outcome) {
    let _ = writeln!(
        out,
        "<h2>Events</h2><p><label><input type=\"checkbox\" onchange=\"only(this.checked)\"> \
         protocol only (hide each step of work written)</label></p>"
    );
    out.push_str("<table id=\"events\">\n");
    for e in &o.events {
        let line = e.describe(&o.names);
        // `describe` puts the time first, right-aligned: split it off.
        let text = line.trim_start();
        let (t, what) = text.split_once("  ").unwrap_or(("", text));
        let class = if e.event.is_protocol() { "protocol" } else { "work" };
        let _ = writeln!(
            out,
            "<tr class=\"{class}\"><td class=\"t\">{}</td><td>{}</td></tr>",
            esc(t),
            esc(what.trim_start())
        );
    }
    out.push_str("</table>\n");
}
