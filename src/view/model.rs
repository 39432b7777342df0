//! From a run's event log to a layout model: lanes, rows on a piecewise time
//! axis, arrows, marks, spans and request bars. Both renderers read only this
//! model, so a new event kind is drawn by naming it in `Builder::event`'s
//! family that fits it and adding one arm to that family's function
//! (`message_event`, `request_event`, `work_event`, `life_event`,
//! `team_event`), and, if it needs a new shape, one variant to `MarkKind` or
//! `SpanKind`.
//!
//! The model's types are declared in `layout` and re-exported here, where
//! renderers and tests name them.

use super::layout::row_at;
pub use super::layout::{
    Arrow, Bar, BarEnd, Fate, Gap, Lane, LaneState, Mark, MarkKind, Model, MsgClass, Role, Row, Segment, Span, SpanKind,
};
use super::{fold, quiet, ViewOptions};
use crate::protocol::{Address, AgentId, GateState, Kind, MessageType, Millis, RequestId, Verdict, YesMeans};
use crate::trace::{Event, Names, RosterStatus};
use crate::world::Outcome;
use std::collections::BTreeMap;

struct SendInfo {
    from: AgentId,
    row: usize,
    t: Millis,
    class: MsgClass,
    text: String,
    words: Option<String>,
    k: usize,
    arrows: usize,
}

/// Builds the model of a finished run.
pub fn build(o: &Outcome, opts: &ViewOptions) -> Model {
    let index = fold::Index::of(&o.events);
    let adversary = adversary(&o.names);
    let folding = fold::alike(&o.events, &o.names, &index, |i| i != 0 && Some(AgentId(i as u32)) != adversary);
    // Each event's parties, once: `None` for an event of a folded member,
    // drawn by its group's representative instead; else how many it stands for.
    let shown: Vec<Option<usize>> = o
        .events
        .iter()
        .map(|e| {
            let parties = index.parties(&e.event);
            (!parties.iter().any(|a| folding.is_hidden(*a))).then(|| folding.times(&parties))
        })
        .collect();
    let mut b = Builder::new(o, opts, &folding, &shown);
    for (k, e) in o.events.iter().enumerate() {
        let Some(times) = shown[k] else { continue };
        if times > 1 {
            b.times.insert(k, times);
        }
        b.event(k, e.t, &e.event);
    }
    quiet::fold(b.finish())
}

/// The adversary's id, if the team has one: after the members, before
/// any name not on the team that a message was written to ("adversary" is
/// a name no member may take).
fn adversary(n: &Names) -> Option<AgentId> {
    n.agents.iter().skip(1).position(|a| a == "adversary").map(|i| AgentId(i as u32 + 1))
}

/// The names a picture writes: a folded group's representative is written
/// as its group (`worker-*`), in its lane, its labels and every sentence.
fn drawn_names(n: &Names, folding: &fold::Folding) -> Names {
    let mut drawn = n.clone();
    for (i, group) in folding.group_name.iter().enumerate() {
        let Some(group) = group else { continue };
        let own = n.agents[i].clone();
        for label in drawn.labels.values_mut() {
            *label = fold::replace_name(label, &own, group);
        }
        drawn.agents[i] = group.clone();
    }
    drawn
}

struct Builder<'a> {
    o: &'a Outcome,
    n: Names,
    /// Events drawn for a folded group: how many agents' events each stands for.
    times: BTreeMap<usize, usize>,
    opts: &'a ViewOptions,
    lane_of: Vec<Option<usize>>,
    lanes: Vec<Lane>,
    rows: Vec<Row>,
    /// Per lane, the last row where it has a label.
    busy: Vec<usize>,
    /// The last row taken by a note about the whole run, and the last row
    /// holding any label at all (a note needs a row of its own).
    note_row: usize,
    text_row: usize,
    /// Times that need a row though no event happens then: deadlines, the
    /// end of a stall, the end of the run. Sorted, consumed from the front.
    extra: Vec<Millis>,
    next_extra: usize,
    sends: BTreeMap<u64, SendInfo>,
    forged: BTreeMap<u64, String>,
    faults: BTreeMap<u64, Vec<String>>,
    arrows: Vec<Arrow>,
    marks: Vec<Mark>,
    spans: Vec<Span>,
    /// Index into `spans` of the crash or stall still open on an agent.
    open_crash: BTreeMap<usize, usize>,
    /// Partition index → its spans, until it heals.
    open_partitions: BTreeMap<u32, Vec<usize>>,
    stalls: Vec<(usize, usize, Millis)>,
    /// File inboxes: each read's span and when the read is done.
    reads: Vec<(usize, Millis)>,
    /// Each file's progress as the log tells it: (writer's lane, done, total).
    writing: BTreeMap<String, (usize, u32, u32)>,
    bars: Vec<Bar>,
    bar_of: BTreeMap<RequestId, usize>,
    /// Per lane, whether its requests are told in words beside the lifeline
    /// (few requests) or only as captions along their bars (a fan-out).
    tell_requests: Vec<bool>,
    /// Per lane, (row, underlying state) changes in order.
    states: Vec<Vec<(usize, LaneState)>>,
}

const NONE: usize = usize::MAX;

impl<'a> Builder<'a> {
    fn new(o: &'a Outcome, opts: &'a ViewOptions, folding: &fold::Folding, shown: &[Option<usize>]) -> Builder<'a> {
        let n = drawn_names(&o.names, folding);
        let count = n.agents.len();
        let adversary = adversary(&n);
        let drawn = || o.events.iter().zip(shown).filter(|(_, s)| s.is_some()).map(|(e, _)| e);
        let acts = |a: AgentId| {
            o.events.iter().any(|e| match &e.event {
                Event::Send { from, .. } => *from == a,
                Event::Forge { .. } => true,
                Event::Deliver { sender, .. } => *sender == a,
                _ => false,
            })
        };
        let mut lane_of = vec![None; count];
        let mut lanes = Vec::new();
        for (i, slot) in lane_of.iter_mut().enumerate() {
            let id = AgentId(i as u32);
            if folding.is_hidden(id) {
                continue;
            }
            let role = if i == 0 {
                Role::Lead
            } else if Some(id) == adversary {
                if !acts(id) {
                    continue;
                }
                Role::Adversary
            } else if adversary.is_some_and(|a| id > a) {
                Role::Outside
            } else {
                Role::Teammate
            };
            *slot = Some(lanes.len());
            let name = match folding.stands_for[i] {
                1 => n.agent(id).to_string(),
                times => format!("{} ×{times}", n.agent(id)),
            };
            lanes.push(Lane {
                agent: id,
                name,
                role,
                segments: Vec::new(),
                slots: 0,
                last: (role == Role::Teammate).then(|| o.roster.get(i).copied()).flatten(),
                stands_for: folding.stands_for[i],
            });
        }
        let mut extra = vec![o.ended_at];
        for r in &o.requests {
            if folding.is_hidden(r.requester) || folding.is_hidden(r.target) {
                continue;
            }
            if r.deadline <= o.ended_at {
                extra.push(r.deadline);
            }
        }
        for e in drawn() {
            let until = match e.event {
                Event::Stall { until, .. } => until,
                Event::Read { busy, .. } => e.t.after(busy),
                _ => continue,
            };
            if until <= o.ended_at {
                extra.push(until);
            }
        }
        extra.sort();
        extra.dedup();
        let states = lanes
            .iter()
            .map(|l| {
                vec![(
                    0,
                    match l.role {
                        Role::Lead => LaneState::Lead,
                        Role::Adversary => LaneState::Adversary,
                        Role::Outside => LaneState::Outside,
                        Role::Teammate => LaneState::Working,
                    },
                )]
            })
            .collect();
        // Past a handful, one row per request would stretch the page for
        // nothing: the bars' captions say the same.
        let mut asked = vec![0usize; lanes.len()];
        for e in drawn() {
            if let Event::Opened { requester, .. } = e.event {
                if let Some(l) = lane_of.get(requester.index()).copied().flatten() {
                    asked[l] += 1;
                }
            }
        }
        let tell_requests = asked.iter().map(|&n| n <= 6).collect();
        Builder {
            o,
            n,
            times: BTreeMap::new(),
            tell_requests,
            opts,
            busy: vec![NONE; lanes.len()],
            lane_of,
            lanes,
            rows: Vec::new(),
            note_row: NONE,
            text_row: NONE,
            extra,
            next_extra: 0,
            sends: BTreeMap::new(),
            forged: BTreeMap::new(),
            faults: BTreeMap::new(),
            arrows: Vec::new(),
            marks: Vec::new(),
            spans: Vec::new(),
            open_crash: BTreeMap::new(),
            open_partitions: BTreeMap::new(),
            stalls: Vec::new(),
            reads: Vec::new(),
            writing: BTreeMap::new(),
            bars: Vec::new(),
            bar_of: BTreeMap::new(),
            states,
        }
    }

    fn lane(&self, a: AgentId) -> Option<usize> {
        self.lane_of.get(a.index()).copied().flatten()
    }

    fn label(&self, id: RequestId) -> String {
        match self.n.label(id) {
            Some(l) => l.to_string(),
            None => id.to_string()[..8].to_string(),
        }
    }

    fn push_row(&mut self, t: Millis) -> usize {
        let gap = match self.rows.last() {
            None => Gap::First,
            Some(r) if r.t == t => Gap::Same,
            Some(r) if t.0 - r.t.0 >= self.opts.idle_after.0 => Gap::Idle(Millis(t.0 - r.t.0)),
            Some(r) => Gap::Step(Millis(t.0 - r.t.0)),
        };
        self.rows.push(Row { t, gap });
        self.rows.len() - 1
    }

    fn flush_extra(&mut self, before: Millis) {
        while let Some(&t) = self.extra.get(self.next_extra) {
            if t >= before {
                break;
            }
            self.next_extra += 1;
            if self.rows.last().is_none_or(|r| r.t < t) {
                self.push_row(t);
            }
        }
    }

    /// The row for something at `t` that labels `labelled` lanes (or the whole
    /// width with `note`), and that must come after row `after`. Rows are
    /// shared while nothing collides, so a fan-out of a hundred sends is one row.
    fn row(&mut self, t: Millis, labelled: &[usize], note: bool, after: usize) -> usize {
        self.flush_extra(t);
        let cur = self.rows.len().wrapping_sub(1);
        let fresh = match self.rows.last() {
            None => true,
            Some(r) if r.t != t => true,
            Some(_) => {
                labelled.iter().any(|&l| self.busy[l] == cur)
                    || (note && self.text_row == cur)
                    || (self.note_row == cur && (note || !labelled.is_empty()))
                    || (after != NONE && after >= cur)
            }
        };
        let row = if fresh { self.push_row(t) } else { cur };
        for &l in labelled {
            self.busy[l] = row;
        }
        if note {
            self.note_row = row;
        }
        if note || !labelled.is_empty() {
            self.text_row = row;
        }
        row
    }

    fn mark(&mut self, k: usize, t: Millis, lane: Option<usize>, kind: MarkKind, text: String) -> usize {
        let row = match lane {
            // A file step is a tick on the lifeline: no label to keep apart.
            Some(_) if kind == MarkKind::FileStep => self.row(t, &[], false, NONE),
            Some(l) => self.row(t, &[l], false, NONE),
            None => self.row(t, &[], true, NONE),
        };
        self.marks.push(Mark { lane, row, t, kind, text, toward: None, k });
        row
    }

    fn set_state(&mut self, lane: usize, row: usize, s: LaneState) {
        self.states[lane].push((row, s));
    }

    fn current_state(&self, lane: usize) -> LaneState {
        self.states[lane].last().map_or(LaneState::Working, |s| s.1)
    }

    /// Draws one event. Events come in families, each drawn by its own
    /// function below; this match only says which family an event is in, so
    /// a new kind of event that no family takes does not compile.
    fn event(&mut self, k: usize, t: Millis, e: &Event) {
        match e {
            Event::Send { .. }
            | Event::Deliver { .. }
            | Event::Dropped { .. }
            | Event::Fault { .. }
            | Event::Forge { .. }
            | Event::Scripted { .. }
            | Event::Refuse { .. } => self.message_event(k, t, e),
            Event::Opened { .. }
            | Event::Verdict { .. }
            | Event::Expired { .. }
            | Event::Deferred { .. }
            | Event::NoAnswer { .. }
            | Event::RequestIgnored { .. } => self.request_event(k, t, e),
            Event::Gate { .. } | Event::Act { .. } | Event::FileStep { .. } | Event::Read { .. } => {
                self.work_event(k, t, e)
            }
            Event::Status { .. }
            | Event::Crash { .. }
            | Event::Restart { .. }
            | Event::Respawn { .. }
            | Event::Stall { .. }
            | Event::Alert { .. } => self.life_event(k, t, e),
            Event::Partition { .. }
            | Event::Heal { .. }
            | Event::Deadlock { .. }
            | Event::DeadlockBroken { .. }
            | Event::Note { .. } => self.team_event(k, t, e),
        }
    }

    /// Messages: a send is remembered until its delivery or loss draws its
    /// arrow; faults and forgeries add to the arrow's words.
    fn message_event(&mut self, k: usize, t: Millis, e: &Event) {
        match e {
            Event::Send { seq, from, message_type, request_id, approve, words, .. } => {
                let row = self.row(t, &[], false, NONE);
                let text = self.message_text(*message_type, *request_id, *approve);
                let words = words.as_ref().map(|w| shown_words(w));
                let class = match message_type {
                    MessageType::Request(_) => MsgClass::Request,
                    MessageType::Response(_) => MsgClass::Response,
                    MessageType::Message | MessageType::Broadcast | MessageType::PlanRequest => MsgClass::Plain,
                };
                if *approve == Some(true) && message_type.yes_means() == YesMeans::Stop {
                    self.stopping(*from, row);
                }
                self.sends.insert(*seq, SendInfo { from: *from, row, t, class, text, words, k, arrows: 0 });
            }
            Event::Deliver { seq, to, .. } => self.arrive(k, t, *seq, *to, Fate::Delivered),
            Event::Dropped { seq, to, cause, .. } => self.arrive(k, t, *seq, *to, Fate::Lost(*cause)),
            Event::Fault { seq, fault, detail } => {
                self.faults.entry(*seq).or_default().push(format!("{fault}: {detail}"));
            }
            Event::Forge { seq, claimed_from, .. } => {
                self.forged.insert(*seq, self.n.agent(*claimed_from).to_string());
            }
            // The send that follows shows as the agent's: the picture draws
            // messages, whoever decided them.
            Event::Scripted { .. } => {}
            Event::Refuse { from, to, message_type, error } => {
                let to_name = self.n.address(*to).to_string();
                let text = format!("⊘ refused {message_type} → {to_name}: {} ({error})", error.rule());
                self.mark(k, t, self.lane(*from), MarkKind::Refused, text);
                if let Address::Agent(a) = to {
                    let toward = self.lane(*a);
                    if let Some(m) = self.marks.last_mut() {
                        m.toward = toward;
                    }
                }
            }
            _ => unreachable!("`event` sends only messages here"),
        }
    }

    /// What an arrow says: type, request label and answer,
    /// `shutdown_response [stop-alice] reject`.
    fn message_text(&self, message_type: MessageType, request_id: Option<RequestId>, approve: Option<bool>) -> String {
        let mut text = message_type.to_string();
        if let Some(id) = request_id {
            text.push_str(&format!(" [{}]", self.label(id)));
        }
        if let Some(yes) = approve {
            text.push(' ');
            text.push_str(message_type.answer_word(yes));
        }
        text
    }

    /// A yes that stops its teammate (a shutdown approved): it finishes its
    /// step, then stops.
    fn stopping(&mut self, agent: AgentId, row: usize) {
        if let Some(l) = self.lane(agent) {
            let s = self.current_state(l);
            if matches!(s, LaneState::Working | LaneState::WaitingApproval | LaneState::Idle) {
                self.set_state(l, row, LaneState::Stopping);
            }
        }
    }

    /// Requests: opening one starts its bar, its answer or expiry ends it;
    /// what a teammate does with a request it holds is a mark.
    fn request_event(&mut self, k: usize, t: Millis, e: &Event) {
        match e {
            Event::Opened { id, kind, requester, target, deadline, .. } => {
                let (Some(lane), Some(target)) = (self.lane(*requester), self.lane(*target)) else {
                    let text = format!("asks [{}], {}", self.label(*id), deadline.as_deadline());
                    self.mark(k, t, self.lane(*requester), MarkKind::Asked, text);
                    return;
                };
                self.open_bar(k, t, *id, *kind, (lane, target), *deadline);
            }
            Event::Verdict { at, request_id, verdict, sender, claimed_from, .. } => {
                let (kind, text) = self.verdict_words(*request_id, verdict, *sender, *claimed_from);
                let row = self.mark(k, t, self.lane(*at), kind, text);
                if let (Verdict::Applied { to, .. }, Some(&b)) = (verdict, self.bar_of.get(request_id)) {
                    let fate = match to {
                        crate::protocol::Status::Approved => BarEnd::Approved,
                        _ => BarEnd::Rejected,
                    };
                    self.end_bar(b, row, t, fate);
                }
            }
            Event::Expired { id, default, .. } => {
                let label = self.label(*id);
                let bar = self.bar_of.get(id).copied();
                let lane = bar.map(|b| self.bars[b].lane);
                let row =
                    self.mark(k, t, lane, MarkKind::Expired, format!("◷ [{label}] expired → {}", default.as_str()));
                if let Some(b) = bar {
                    self.end_bar(b, row, t, BarEnd::Expired(*default));
                }
            }
            Event::Deferred { agent, request_id } => {
                let text = format!("puts [{}] aside: busy waiting", self.label(*request_id));
                self.mark(k, t, self.lane(*agent), MarkKind::Deferred, text);
            }
            Event::NoAnswer { agent, request_id } => {
                let text = format!("leaves [{}] unanswered", self.label(*request_id));
                self.mark(k, t, self.lane(*agent), MarkKind::NoAnswer, text);
            }
            Event::RequestIgnored { agent, request_id, message_type, sender, claimed_from, reason } => {
                let text = format!(
                    "⚠ ignores {message_type} [{}] from {}{}: {reason}",
                    self.label(*request_id),
                    self.n.agent(*sender),
                    self.claims(*sender, *claimed_from)
                );
                self.mark(k, t, self.lane(*agent), MarkKind::Ignored, text);
            }
            _ => unreachable!("`event` sends only requests here"),
        }
    }

    /// A request's bar on its requester's lane, from row of its opening; the
    /// opening is told in words beside the lifeline if the lane asks few.
    fn open_bar(&mut self, k: usize, t: Millis, id: RequestId, kind: Kind, lanes: (usize, usize), deadline: Millis) {
        let (lane, target) = lanes;
        let told = self.tell_requests[lane];
        let row = if told {
            let text = format!(
                "asks {} [{}] · {}",
                self.n.agent(self.lanes[target].agent),
                self.label(id),
                deadline.as_deadline()
            );
            self.mark(k, t, Some(lane), MarkKind::Asked, text)
        } else {
            self.row(t, &[], false, NONE)
        };
        self.bar_of.insert(id, self.bars.len());
        self.bars.push(Bar {
            lane,
            target,
            slot: 0,
            label: self.label(id),
            kind,
            from: row,
            end: NONE,
            end_t: t,
            fate: BarEnd::Pending,
            deadline,
            deadline_row: None,
            told,
            k,
            times: 1,
        });
    }

    /// The first end a bar reaches is its end: a later answer changes nothing.
    fn end_bar(&mut self, b: usize, row: usize, t: Millis, fate: BarEnd) {
        let bar = &mut self.bars[b];
        if bar.end == NONE {
            bar.end = row;
            bar.end_t = t;
            bar.fate = fate;
        }
    }

    /// The mark for an answer's verdict: applied (approved or rejected), or
    /// ignored with the protocol's reason.
    fn verdict_words(&self, id: RequestId, verdict: &Verdict, sender: AgentId, claimed: AgentId) -> (MarkKind, String) {
        let label = self.label(id);
        match verdict {
            Verdict::Applied { to, .. } => {
                let kind = match to {
                    crate::protocol::Status::Approved => MarkKind::Approved,
                    _ => MarkKind::Rejected,
                };
                let glyph = if kind == MarkKind::Approved { "✓" } else { "✗" };
                (kind, format!("{glyph} [{label}] {to}"))
            }
            Verdict::Ignored(r) => {
                let who = self.n.agent(sender);
                let claims = self.claims(sender, claimed);
                (MarkKind::Ignored, format!("⚠ ignored answer to [{label}] from {who}{claims}: {r}"))
            }
        }
    }

    /// `, claims to be alice` when a message's sender is not whom it claims.
    fn claims(&self, sender: AgentId, claimed_from: AgentId) -> String {
        if claimed_from != sender {
            format!(", claims to be {}", self.n.agent(claimed_from))
        } else {
            String::new()
        }
    }

    /// Work: the plan gate, actions, files written step by step, inbox files read.
    fn work_event(&mut self, k: usize, t: Millis, e: &Event) {
        match e {
            Event::Gate { agent, state } => {
                let text = match state {
                    GateState::Approved => "gate open: plan approved".to_string(),
                    GateState::Rejected => "gate closed: plan rejected".to_string(),
                    GateState::Pending => "gate closed: plan pending".to_string(),
                    GateState::Required => "gate closed: plan required".to_string(),
                    GateState::NotRequired => "gate not required".to_string(),
                };
                self.mark(k, t, self.lane(*agent), MarkKind::Gate(*state), text);
            }
            Event::Act { agent, action, path, blocked } => {
                let path = path.as_ref().map(|p| format!(" {p}")).unwrap_or_default();
                let (kind, text) = match blocked {
                    Some(g) => (MarkKind::Blocked, format!("⊗ blocked: {}{path} (gate {g})", action.as_str())),
                    None => (MarkKind::Action, format!("{}{path}", action.as_str())),
                };
                self.mark(k, t, self.lane(*agent), kind, text);
            }
            Event::FileStep { agent, path, done, total } => {
                let lane = self.lane(*agent);
                if let Some(l) = lane {
                    self.writing.insert(path.to_string(), (l, *done, *total));
                }
                if done == total {
                    self.mark(k, t, lane, MarkKind::FileDone, format!("{path} {done}/{total} written"));
                } else {
                    self.mark(k, t, lane, MarkKind::FileStep, format!("{path} {done}/{total}"));
                }
            }
            Event::Read { agent, path, lines, bytes, busy } => {
                let Some(lane) = self.lane(*agent) else { return };
                let words = format!("reads {path}: {}, {bytes} bytes", crate::words::plural(u64::from(*lines), "line"));
                let row = self.mark(k, t, Some(lane), MarkKind::Read, words);
                let until = t.after(*busy);
                self.reads.push((self.spans.len(), until));
                let text = format!("busy reading {path} until {until}");
                self.open_span(k, (lane, row), SpanKind::Reading, text, false);
            }
            _ => unreachable!("`event` sends only work here"),
        }
    }

    /// An agent's life: roster changes, crashes and restarts, stalls, alerts.
    fn life_event(&mut self, k: usize, t: Millis, e: &Event) {
        match e {
            Event::Status { agent, status } => self.status(k, t, *agent, *status),
            Event::Crash { agent, restart_at } => {
                let text = match restart_at {
                    Some(at) if *at == t => "✸ crash (restart may come from now on)".to_string(),
                    Some(at) => format!("✸ crash (restart due {at})"),
                    None => "✸ crash (final)".to_string(),
                };
                let Some(lane) = self.lane(*agent) else { return };
                let text = format!("{text}{}", self.left_partial(lane));
                let row = self.mark(k, t, Some(lane), MarkKind::Crash, text);
                let span = self.open_span(k, (lane, row), SpanKind::Crash, "crashed".into(), true);
                self.open_crash.insert(lane, span);
            }
            Event::Restart { agent } => {
                let Some(lane) = self.lane(*agent) else { return };
                let row = self.mark(k, t, Some(lane), MarkKind::Restart, "↻ restart".into());
                if let Some(s) = self.open_crash.remove(&lane) {
                    self.close_span(s, row, k);
                }
            }
            Event::Respawn { agent } => {
                self.mark(k, t, self.lane(*agent), MarkKind::Restart, "↻ respawned: a new process".into());
            }
            Event::Stall { agent, until } => {
                let Some(lane) = self.lane(*agent) else { return };
                let row = self.mark(k, t, Some(lane), MarkKind::Stall, format!("‖ stalls until {until}"));
                self.stalls.push((lane, row, *until));
                self.open_span(k, (lane, row), SpanKind::Stall, format!("stalled until {until}"), false);
            }
            Event::Alert { agent, text } => {
                self.mark(k, t, self.lane(*agent), MarkKind::Alert, format!("⚠ {text}"));
            }
            _ => unreachable!("`event` sends only agents' lives here"),
        }
    }

    /// A roster change: the lane's state from here on; a stop is also a mark.
    fn status(&mut self, k: usize, t: Millis, agent: AgentId, status: RosterStatus) {
        let Some(lane) = self.lane(agent) else { return };
        let s = LaneState::from_roster(status);
        // Once stopping, only the stop itself changes what the lane shows.
        if self.current_state(lane) == LaneState::Stopping && !s.is_gone() {
            return;
        }
        let row = match status {
            RosterStatus::Shutdown => self.mark(k, t, Some(lane), MarkKind::Stopped, "shut down".into()),
            RosterStatus::Killed => {
                let text = format!("killed{}", self.left_partial(lane));
                self.mark(k, t, Some(lane), MarkKind::Stopped, text)
            }
            _ => self.row(t, &[], false, NONE),
        };
        self.set_state(lane, row, s);
    }

    /// Whatever touches the team as a whole: partitions, deadlocks, notes.
    fn team_event(&mut self, k: usize, t: Millis, e: &Event) {
        match e {
            Event::Partition { index, a, b, one_way, drop, until } => {
                let how = if *drop { "loses" } else { "holds" };
                let dir = if *one_way { "→" } else { "⇄" };
                let (na, nb) = (self.n.agent(*a).to_string(), self.n.agent(*b).to_string());
                let heals = until.map(|u| format!(", heals at {u}")).unwrap_or_default();
                let text = format!("⟂ partition {}: {na} {dir} {nb} {how} messages{heals}", index + 1);
                let row = self.mark(k, t, None, MarkKind::Note, text);
                let mut opened = Vec::new();
                for agent in [a, b] {
                    let Some(lane) = self.lane(*agent) else { continue };
                    let text = format!("partition {}", index + 1);
                    opened.push(self.open_span(k, (lane, row), SpanKind::Partition, text, true));
                }
                self.open_partitions.insert(*index, opened);
            }
            Event::Heal { index } => {
                let row = self.mark(k, t, None, MarkKind::Note, format!("⟂ partition {} heals", index + 1));
                for s in self.open_partitions.remove(index).unwrap_or_default() {
                    self.close_span(s, row, k);
                }
            }
            Event::Deadlock { members, requests } => {
                let cycle = crate::trace::cycle_text(members, &self.n);
                // The cycle is named once across the page; each member's
                // lifeline gets a ring where it is stuck, and on what.
                self.mark(k, t, None, MarkKind::Deadlock, format!("⟳ DEADLOCK {cycle}"));
                for (i, agent) in members.iter().enumerate() {
                    let Some(lane) = self.lane(*agent) else { continue };
                    let on = requests.get(i).map(|id| format!(" on [{}]", self.label(*id))).unwrap_or_default();
                    self.mark(k, t, Some(lane), MarkKind::Deadlock, format!("⟳ stuck{on}"));
                }
            }
            Event::DeadlockBroken { members, by, default } => {
                let cycle = crate::trace::cycle_text(members, &self.n);
                let how = match default {
                    Some(d) => format!("[{}] expired → {}", self.label(*by), d.as_str()),
                    None => format!("[{}] ended", self.label(*by)),
                };
                self.mark(k, t, None, MarkKind::DeadlockBroken, format!("⟳ deadlock {cycle} broken: {how}"));
            }
            Event::Note { text } => {
                self.mark(k, t, None, MarkKind::Note, text.clone());
            }
            _ => unreachable!("`event` sends only the team's events here"),
        }
    }

    /// A span on `lane` from `row`, its end not yet known; returns its index.
    /// `open` says whether it is drawn to the bottom if nothing ends it.
    fn open_span(&mut self, k: usize, (lane, row): (usize, usize), kind: SpanKind, text: String, open: bool) -> usize {
        self.spans.push(Span { lane, from: row, to: NONE, kind, text, open, k, k_end: NONE });
        self.spans.len() - 1
    }

    /// The span ends at `row`, by the event at `k`.
    fn close_span(&mut self, s: usize, row: usize, k: usize) {
        self.spans[s].to = row;
        self.spans[s].open = false;
        self.spans[s].k_end = k;
    }

    /// What a lane going down leaves half-written: ` · leaves src/auth.rs 2/4 written`.
    fn left_partial(&self, lane: usize) -> String {
        self.writing
            .iter()
            .filter(|(_, &(l, done, total))| l == lane && done < total)
            .map(|(path, (_, done, total))| format!(" · leaves {path} {done}/{total} written"))
            .collect()
    }

    fn arrive(&mut self, k: usize, t: Millis, seq: u64, to: AgentId, fate: Fate) {
        let to_lane = self.lane(to);
        let after = self.sends.get(&seq).map_or(NONE, |s| s.row);
        // A loss is labelled at the receiver; a delivery is labelled on its arrow.
        let labelled: Vec<usize> = match (fate, to_lane) {
            (Fate::Lost(_), Some(l)) => vec![l],
            _ => Vec::new(),
        };
        let row = self.row(t, &labelled, false, after);
        let (Some(info), Some(to_lane)) = (self.sends.get_mut(&seq), to_lane) else {
            // A loss with no send on record still says so.
            let text = format!("✕ message #{seq} lost");
            self.marks.push(Mark { lane: to_lane, row, t, kind: MarkKind::Alert, text, toward: None, k });
            return;
        };
        info.arrows += 1;
        let Some(from) = self.lane_of.get(info.from.index()).copied().flatten() else { return };
        let mut notes = self.faults.get(&seq).cloned().unwrap_or_default();
        if let Fate::Lost(c) = fate {
            notes.insert(0, format!("✕ lost: {}", c.as_str()));
        }
        self.arrows.push(Arrow {
            seq,
            from,
            to: to_lane,
            sent: info.row,
            end: row,
            t_sent: info.t,
            t_end: t,
            class: info.class,
            text: info.text.clone(),
            words: info.words.clone(),
            fate,
            forged_as: self.forged.get(&seq).cloned(),
            notes,
            k,
            times: 1,
        });
    }

    /// The model once every event is drawn: rows for what is left of the
    /// run, then whatever was still going at the end is drawn to it.
    fn finish(mut self) -> Model {
        let end = self.o.ended_at.max(self.rows.last().map_or(Millis::ZERO, |r| r.t));
        self.flush_extra(Millis(end.0.saturating_add(1)));
        if self.rows.is_empty() {
            self.push_row(Millis::ZERO);
        }
        let last = self.rows.len() - 1;
        self.partial_files(last);
        self.in_flight(last);
        self.end_spans(end, last);
        self.end_bars(end, last);
        let slots = self.bar_slots(last);
        let mut lanes = std::mem::take(&mut self.lanes);
        for (i, lane) in lanes.iter_mut().enumerate() {
            lane.slots = slots[i];
            lane.segments = self.segments(i, last);
        }
        self.count_folded();
        Model {
            lanes,
            rows: self.rows,
            arrows: self.arrows,
            marks: self.marks,
            spans: self.spans,
            bars: self.bars,
            ended_at: self.o.ended_at,
            stop: stop_words(self.o.stop),
        }
    }

    /// Files the run left partly written, marked where the writer's lane ends.
    fn partial_files(&mut self, last: usize) {
        for (path, st) in &self.o.files {
            let Some(lane) = self.lane(st.writer) else { continue };
            if !st.is_complete() {
                let text = format!("▤ {path} partial at the end: {}/{} written", st.done, st.total);
                let k = self.o.events.len();
                self.marks.push(Mark {
                    lane: Some(lane),
                    row: last,
                    t: self.rows[last].t,
                    kind: MarkKind::Partial,
                    text,
                    toward: None,
                    k,
                });
            }
        }
    }

    /// Messages neither delivered nor lost: in flight when the run ended,
    /// drawn to the last row.
    fn in_flight(&mut self, last: usize) {
        let pending: Vec<(u64, usize, usize)> = self
            .sends
            .iter()
            .filter(|(_, s)| s.arrows == 0)
            .filter_map(|(seq, s)| self.lane(s.from).map(|l| (*seq, l, s.k)))
            .collect();
        for (seq, from, k) in pending {
            let to = self.o.events[k].event.clone();
            let Event::Send { to: Address::Agent(to), .. } = to else { continue };
            let Some(to) = self.lane(to) else { continue };
            let s = &self.sends[&seq];
            self.arrows.push(Arrow {
                seq,
                from,
                to,
                sent: s.row,
                end: last,
                t_sent: s.t,
                t_end: self.rows[last].t,
                class: s.class,
                text: s.text.clone(),
                words: s.words.clone(),
                fate: Fate::InFlight,
                forged_as: self.forged.get(&seq).cloned(),
                notes: self.faults.get(&seq).cloned().unwrap_or_default(),
                k: s.k,
                times: 1,
            });
        }
    }

    /// Where each span ends: a read when it is done, a stall at its end or
    /// when its agent goes first, and any span nothing ended at the last row.
    fn end_spans(&mut self, end: Millis, last: usize) {
        let gone_at = |states: &[(usize, LaneState)], after: usize| {
            states.iter().find(|(r, s)| *r >= after && s.is_gone()).map(|(r, _)| *r)
        };
        for &(s, until) in &self.reads {
            let span = &mut self.spans[s];
            span.open = until > end;
            span.to = if span.open { last } else { row_at(&self.rows, until) };
        }
        for span in &mut self.spans {
            if span.kind == SpanKind::Reading {
                continue;
            }
            if span.kind == SpanKind::Stall {
                let until = self
                    .stalls
                    .iter()
                    .find(|(l, r, _)| *l == span.lane && *r == span.from)
                    .map(|(_, _, u)| *u)
                    .unwrap_or(Millis::NEVER);
                let mut to = if until <= end { row_at(&self.rows, until) } else { last };
                span.open = until > end;
                if let Some(g) = gone_at(&self.states[span.lane], span.from) {
                    if g < to {
                        to = g;
                        span.open = false;
                    }
                }
                span.to = to;
            } else if span.to == NONE {
                span.to = last;
            }
        }
    }

    /// Bars still pending run to the last row; each gets the row of its
    /// deadline if the run reached it.
    fn end_bars(&mut self, end: Millis, last: usize) {
        for bar in &mut self.bars {
            if bar.end == NONE {
                bar.end = last;
                bar.end_t = self.rows[last].t;
            }
            bar.deadline_row = (bar.deadline <= end).then(|| row_at(&self.rows, bar.deadline));
        }
    }

    /// Bars side by side: each takes the leftmost slot free for its whole
    /// life. Returns how many slots each lane needs.
    fn bar_slots(&mut self, last: usize) -> Vec<usize> {
        let mut slot_ends: Vec<Vec<usize>> = vec![Vec::new(); self.lanes.len()];
        for bar in &mut self.bars {
            let reach = bar.deadline_row.unwrap_or(last).max(bar.end);
            let ends = &mut slot_ends[bar.lane];
            let slot = ends.iter().position(|&e| e < bar.from).unwrap_or(ends.len());
            if slot == ends.len() {
                ends.push(reach);
            } else {
                ends[slot] = reach;
            }
            bar.slot = slot;
        }
        slot_ends.iter().map(|ends| ends.len()).collect()
    }

    /// Lane `i`'s lifeline: the roster's states as segments, with its stalls
    /// laid over them, from the first row to the last.
    fn segments(&self, i: usize, last: usize) -> Vec<Segment> {
        let stalls: Vec<(usize, usize)> =
            self.spans.iter().filter(|s| s.lane == i && s.kind == SpanKind::Stall).map(|s| (s.from, s.to)).collect();
        let mut cuts: Vec<usize> = self.states[i].iter().map(|s| s.0).collect();
        cuts.extend(stalls.iter().flat_map(|&(a, b)| [a, b]));
        cuts.push(last);
        cuts.sort();
        cuts.dedup();
        let state_at = |r: usize| {
            let base = self.states[i].iter().take_while(|s| s.0 <= r).last().map_or(LaneState::Working, |s| s.1);
            if !base.is_gone() && stalls.iter().any(|&(a, b)| a <= r && r < b) {
                LaneState::Stalled
            } else {
                base
            }
        };
        let mut segs: Vec<Segment> = Vec::new();
        for w in cuts.windows(2) {
            let state = state_at(w[0]);
            match segs.last_mut() {
                Some(s) if s.state == state => s.to = w[1],
                _ => segs.push(Segment { from: w[0], to: w[1], state }),
            }
        }
        if segs.is_empty() {
            segs.push(Segment { from: 0, to: last, state: state_at(0) });
        }
        segs
    }

    /// What a folded group's lane draws once stands for each of its members:
    /// arrows, bars and marks say how many.
    fn count_folded(&mut self) {
        for a in &mut self.arrows {
            a.times = self.times.get(&a.k).copied().unwrap_or(1);
        }
        self.merge_twin_arrows();
        for a in &mut self.arrows {
            if a.times > 1 {
                a.text.push_str(&format!(" ×{}", a.times));
            }
        }
        for b in &mut self.bars {
            b.times = self.times.get(&b.k).copied().unwrap_or(1);
        }
        for mk in &mut self.marks {
            if let Some(times) = self.times.get(&mk.k) {
                mk.text.push_str(&format!(" ×{times}"));
            }
        }
    }

    /// Messages alike in all but their number, sent and received in the
    /// same rows, would be drawn on top of each other (37's ten appends):
    /// one arrow says how many.
    fn merge_twin_arrows(&mut self) {
        let mut merged: Vec<Arrow> = Vec::with_capacity(self.arrows.len());
        let mut at: BTreeMap<(usize, usize, usize, usize), Vec<usize>> = BTreeMap::new();
        for a in std::mem::take(&mut self.arrows) {
            let same = at.entry((a.from, a.to, a.sent, a.end)).or_default();
            let twin = same.iter().copied().find(|&i| {
                let b: &Arrow = &merged[i];
                b.text == a.text
                    && b.words == a.words
                    && b.fate == a.fate
                    && b.forged_as == a.forged_as
                    && b.notes == a.notes
            });
            match twin {
                Some(i) => merged[i].times += a.times,
                None => {
                    same.push(merged.len());
                    merged.push(a);
                }
            }
        }
        self.arrows = merged;
    }
}

/// The most characters of a message's words a picture shows. A picture
/// wraps them above the arrow, and a few lines are all it can show; a 1 MiB
/// text sent to a thousand teammates was kept a thousand times over.
const SHOWN_WORDS: usize = 400;

/// A message's words as a picture shows them: quoted, and cut after
/// [`SHOWN_WORDS`] characters with their full length said.
fn shown_words(w: &str) -> String {
    match w.char_indices().nth(SHOWN_WORDS) {
        None => format!("“{w}”"),
        Some((cut, _)) => format!("“{}…” ({} bytes in all)", &w[..cut], w.len()),
    }
}

/// Why the run stopped, in the words under the picture's title.
fn stop_words(stop: crate::world::Stop) -> &'static str {
    match stop {
        crate::world::Stop::Settled => "settled",
        crate::world::Stop::EndTime => "reached its end time",
        crate::world::Stop::Cap => "hit the time cap",
        crate::world::Stop::Aborted => "stopped by the real-time guard",
        crate::world::Stop::InboxBound => "stopped by the inbox bound",
        crate::world::Stop::LogBound => "stopped by the log bound",
        crate::world::Stop::ScheduleEnd => "stopped where its schedule ends",
    }
}
