//! A run as the steps a learner walks through (`run --html`): for each
//! event, what it says, and what every agent and the world looked like by
//! then, read from the frames the simulator kept (`world::frames`), as data
//! the page's script only looks up, never derives.
//!
//! The page receives `frames.agents` and `frames.world` as lists stamped
//! as `world::frames` says; the state at event `k` is, for each part, the
//! last entry stamped `k + 1` or less. An agent's frame lists only the
//! requests that changed since its previous frame (a lead of 100 teammates
//! would repeat its whole table at every turn, most of a page's bytes), so
//! its table at `k` is its frames' rows up to `k`, later ones replacing
//! earlier ones of the same label.

use crate::protocol::{Request, RequestId};
use crate::trace::Names;
use crate::world::frames::{AgentFrame, Frames};
use crate::world::Outcome;
use serde_json::{json, Value};

/// The most events a page steps through. The steps' data grows with each
/// event, and a page is read whole by a browser: past this, the
/// page leaves the stepper out and says so (`view::html`).
pub const MAX_STEPPED: usize = 50_000;

/// The steps of `outcome`, or `None` if its frames were not kept or it has
/// more than `MAX_STEPPED` events.
pub fn steps(outcome: &Outcome) -> Option<Value> {
    let frames: &Frames = outcome.frames.as_deref()?;
    if outcome.events.len() > MAX_STEPPED {
        return None;
    }
    let names = &outcome.names;
    let label = |id: RequestId| names.label_or_short(id);
    // Where each event's moment is drawn in the picture (the page marks it):
    // the picture's own layout, which its title does not change.
    let model = super::model::build(outcome, &super::ViewOptions::default());
    let geometry = super::svg::geometry(&model);
    let events: Vec<Value> = outcome
        .events
        .iter()
        .map(|e| {
            let y = geometry.y.get(model.row_at(e.t)).copied().unwrap_or(0.0).round();
            json!({ "t": e.t.to_string(), "ms": e.t.0, "text": super::page_sentence(e, names), "y": y })
        })
        .collect();
    let mut told: Vec<std::collections::BTreeMap<String, Value>> = vec![Default::default(); names.agents.len()];
    let agents: Vec<Value> = frames
        .agents
        .iter()
        .map(|f| {
            let mut view = agent_view(f, names, &label);
            let before = &mut told[f.agent.index()];
            let rows = view["requests"].take();
            let changed: Vec<Value> = rows
                .as_array()
                .into_iter()
                .flatten()
                .filter(|r| {
                    let key = r["label"].as_str().unwrap_or_default().to_string();
                    before.insert(key, (*r).clone()).as_ref() != Some(*r)
                })
                .cloned()
                .collect();
            view["requests"] = Value::Array(changed);
            json!([f.after, f.agent.index(), view])
        })
        .collect();
    // A team of thousands: each frame says who moved (`moved`), and the
    // page replays them from `roster`, the statuses at the first frame; a
    // whole roster at each frame was the team's size times its changes.
    let whole = frames.roster.len() <= WHOLE_ROSTER;
    let mut statuses = frames.roster.clone();
    let world: Vec<Value> = frames
        .world
        .iter()
        .map(|f| {
            for &(a, st) in &f.roster {
                statuses[a.index()] = st;
            }
            let roster: Vec<&str> = if whole { statuses.iter().map(|s| s.as_str()).collect() } else { Vec::new() };
            let moved: Vec<Value> = f.roster.iter().map(|(a, st)| json!([a.index(), st.as_str()])).collect();
            let files: Vec<Value> = f
                .files
                .iter()
                .map(|(path, st)| json!({ "path": path, "writer": names.agent(st.writer), "done": st.done, "total": st.total }))
                .collect();
            let waits: Vec<Value> = f
                .waits
                .edges()
                .map(|(from, to, r)| json!({ "from": names.agent(from), "to": names.agent(to), "request": label(r) }))
                .collect();
            let cycles: Vec<Vec<&str>> =
                f.waits.cycles().iter().map(|c| c.members.iter().map(|&a| names.agent(a)).collect()).collect();
            let inbox: Vec<Value> = f
                .inbox
                .iter()
                .map(|(path, text)| json!({ "path": path, "lines": text.lines().collect::<Vec<_>>() }))
                .collect();
            // Indexed by agent, as the roster is: `null` unless it is busy reading.
            let mut reading = vec![Value::Null; if whole || !f.reading.is_empty() { statuses.len() } else { 0 }];
            for &(a, until) in &f.reading {
                if let Some(slot) = reading.get_mut(a.index()) {
                    *slot = json!({ "until": until.to_string(), "until_ms": until.0 });
                }
            }
            if !whole {
                return json!([f.after, { "moved": moved, "files": files, "waits": waits, "cycles": cycles, "inbox": inbox, "reading": reading }]);
            }
            json!([f.after, { "roster": roster, "files": files, "waits": waits, "cycles": cycles, "inbox": inbox, "reading": reading }])
        })
        .collect();
    let team: Vec<&str> = names.agents.iter().take(outcome.roster.len()).map(String::as_str).collect();
    let mut steps = json!({ "agents": team, "events": events, "frames": { "agents": agents, "world": world } });
    if !whole {
        let first: Vec<&str> = frames.roster.iter().map(|s| s.as_str()).collect();
        steps["roster"] = json!(first);
    }
    Some(steps)
}

/// Up to this many agents, each world frame lists the whole roster.
const WHOLE_ROSTER: usize = 128;

fn agent_view(f: &AgentFrame, names: &Names, label: &dyn Fn(RequestId) -> String) -> Value {
    let rows: Vec<Value> = f.requests.iter().map(|r| row(r, names, label)).collect();
    let Some(doing) = &f.doing else {
        return json!({ "doing": "leading the team", "requests": rows });
    };
    let (gate, plan) = f.gate.map_or(("not_required", None), |(g, p)| (g.as_str(), p.map(label)));
    let set_aside: Vec<String> = f
        .set_aside
        .iter()
        .map(|(kind, id, sender)| match id {
            Some(id) => format!("{kind} [{}] from {}", label(*id), names.agent(*sender)),
            None => format!("{kind} from {}", names.agent(*sender)),
        })
        .collect();
    json!({
        "doing": doing,
        "gate": gate,
        "plan": plan,
        "set_aside": set_aside,
        "requests": rows,
    })
}

fn row(r: &Request, names: &Names, label: &dyn Fn(RequestId) -> String) -> Value {
    let deadline = (!r.deadline.is_never()).then_some(r.deadline);
    json!({
        "label": label(r.id),
        "kind": r.kind.as_str(),
        "from": names.agent(r.requester),
        "to": names.agent(r.target),
        "status": r.status.as_str(),
        "sent": r.sent_at.to_string(),
        "deadline": deadline.map(|d| d.to_string()),
        "deadline_ms": deadline.map(|d| d.0),
    })
}
