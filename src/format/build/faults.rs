//! Each `[[fault]]`: the checks every fault shares, then one function per
//! family of kinds (`FaultKind`).

use super::*;

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fault(
        &mut self,
        n: usize,
        f: &S<FaultDoc>,
        team: &Team,
        labels: &Labels,
        limit: Millis,
        link: &mut Vec<LinkFault>,
        partitions: &mut Vec<Partition>,
        timed: &mut Vec<(Millis, Scheduled)>,
    ) {
        // The kind is known and every key applies to it: the file reader
        // checked both and named what did not fit.
        let d = f.get_ref();
        let Some(kind) = FaultKind::named(d.kind.get_ref()) else { return };
        if let Some(c) = d.count.as_ref().filter(|c| *c.get_ref() == 0) {
            self.err(c.span(), format!("fault #{n}: count = 0 touches nothing"))
                .label("zero")
                .help("give count = 1 or more, or leave `count` out to touch every matching message");
        }
        let at = match &d.at {
            Some(a) => self.duration(a, &format!("fault #{n} `at`")),
            None if !kind.at_is_optional() => {
                self.missing(n, f, kind, "at");
                None
            }
            None => Some(Millis::ZERO),
        };
        let until = d.until.as_ref().and_then(|u| self.duration(u, &format!("fault #{n} `until`")));
        if let (Some(a), Some(u)) = (at, until) {
            if let (true, Some(written)) = (u <= a, &d.until) {
                self.err(
                    written.span(),
                    format!("fault #{n}: `until` ({}) must come after `at` ({})", human(u), human(a)),
                )
                .label(format!("not after {}", human(a)))
                .help("give an `until` later than `at`, or leave it out to last to the end of the run");
            }
        }
        if let Some(a) = at {
            if a > limit {
                self.err(
                    d.at.as_ref().map_or(f.span(), |x| x.span()),
                    format!("fault #{n} at {} comes after the end of the run ({})", human(a), human(limit)),
                )
                .label(format!("after {}", human(limit)))
                .help("give an earlier `at`, or raise the file's `end` or `cap`");
            }
        }
        if d.stray_keys {
            return;
        }
        let Some(at) = at else { return };
        let c = FaultCtx { n, f, kind, at, until, team, labels };
        match kind {
            FaultKind::Delay | FaultKind::Drop | FaultKind::Duplicate | FaultKind::Reorder => self.link_fault(&c, link),
            FaultKind::Partition => self.partition_fault(&c, partitions),
            FaultKind::Crash | FaultKind::Stall | FaultKind::TornWrite => self.agent_fault(&c, timed),
            FaultKind::JunkLine => self.junk_line_fault(&c, timed),
            FaultKind::RepeatedDelivery | FaultKind::DisplayCap => self.runtime_fault(&c, timed),
            FaultKind::PhantomSend => self.phantom_send(&c, timed),
            FaultKind::MisroutedId => self.misrouted_id(&c, timed),
            FaultKind::Forge => self.forge_fault(&c, timed),
            FaultKind::Replay => self.replay_fault(&c, timed),
        }
    }

    /// Whether the fault has `key`; if not, says so.
    fn needs(&mut self, c: &FaultCtx, present: bool, key: &str) -> bool {
        if !present {
            self.missing(c.n, c.f, c.kind, key);
        }
        present
    }

    /// Fault #`n` lacks `key`. A missing key has no place: the fault's
    /// table is shown, with the keys its kind takes.
    fn missing(&mut self, n: usize, f: &S<FaultDoc>, kind: FaultKind, key: &str) {
        let takes = kind.keys().join(", ");
        self.err(f.span(), format!("fault #{n} ({kind}) is missing `{key}`"))
            .label(format!("no `{key}`"))
            .help(format!("add `{key}`, like {}; a {kind} fault takes {takes}", example(key)));
    }

    /// A fault on a link's messages: delay, drop, duplicate or reorder.
    fn link_fault(&mut self, c: &FaultCtx, link: &mut Vec<LinkFault>) {
        let (n, d, kind, at, until, team, labels) = (c.n, c.f.get_ref(), c.kind, c.at, c.until, c.team, c.labels);
        let effect = match kind {
            FaultKind::Delay => {
                if !self.needs(c, d.delay.is_some(), "delay") {
                    return;
                }
                let s = d.delay.as_ref().unwrap();
                match parse_latency(s.get_ref()) {
                    Ok(l) => LinkEffect::Delay(l),
                    Err(e) => {
                        let (message, fix) = split_fix(&e);
                        let help = fix.map_or_else(
                            || "give a duration, like delay = \"5s\", or a range, like delay = \"1s..5s\"".to_string(),
                            str::to_string,
                        );
                        self.err(s.span(), format!("fault #{n} delay: {message}")).label("not a delay").help(help);
                        return;
                    }
                }
            }
            FaultKind::Drop => LinkEffect::Drop,
            FaultKind::Duplicate => LinkEffect::Duplicate,
            _ => LinkEffect::Reorder,
        };
        let probability = d.probability.as_ref().map_or(1.0, |p| *p.get_ref());
        if let (false, Some(p)) = ((0.0..=1.0).contains(&probability), &d.probability) {
            self.err(p.span(), "probability must be between 0 and 1")
                .label("outside 0..1")
                .help("give a chance from 0 to 1, like probability = 0.5 for half the messages");
            return;
        }
        let mut filter = Filter::default();
        if let Some(x) = &d.from {
            filter.from = Some(match self.agent(x, team, "from") {
                Some(a) => a,
                None => return,
            });
        }
        if let Some(x) = &d.to {
            filter.to = Some(match self.agent(x, team, "to") {
                Some(a) => a,
                None => return,
            });
        }
        if let Some(t) = &d.types {
            for name in t.get_ref().to_vec() {
                match MessageType::parse(&name) {
                    Some(m) => filter.types.push(m),
                    None => {
                        let help = file::one_of(&name, message_types());
                        self.err(t.span(), format!("unknown message type {name:?}"))
                            .label("unknown message type")
                            .help(help);
                        return;
                    }
                }
            }
        }
        if let Some(r) = &d.request {
            self.label(r, team, labels);
            filter.request = Some(r.get_ref().trim_start_matches('@').to_string());
        }
        link.push(LinkFault {
            effect,
            filter,
            at,
            until,
            count: d.count.as_ref().map(|c| *c.get_ref()),
            probability,
            hits: 0,
        });
    }

    /// A partition between two agents, both ways or one, holding or dropping.
    fn partition_fault(&mut self, c: &FaultCtx, partitions: &mut Vec<Partition>) {
        let (d, at, until, team) = (c.f.get_ref(), c.at, c.until, c.team);
        if !self.needs(c, d.between.is_some(), "between") {
            return;
        }
        let between = d.between.as_ref().unwrap();
        let [a, b] = between.get_ref().as_slice() else {
            self.err(between.span(), "`between` names exactly two agents")
                .label(format!("{} named", between.get_ref().len()))
                .help("name the two sides, like between = [\"lead\", \"alice\"]");
            return;
        };
        let (Some(a), Some(b)) = (team.id(a), team.id(b)) else {
            let unknown = if team.id(a).is_none() { a } else { b };
            let guess = if team.names.len() <= 1000 {
                let names: Vec<&str> = team.names.iter().map(String::as_str).collect();
                file::guess(unknown, &names)
            } else {
                String::new()
            };
            self.err(between.span(), format!("`between`: no agent is named {unknown:?}"))
                .label("no such agent")
                .help(format!("{guess}the team is {}", team.describe()));
            return;
        };
        if a == b {
            self.err(between.span(), "`between` names two different agents: an agent cannot be cut off from itself")
                .label("the same agent twice")
                .help("name two different agents, like between = [\"lead\", \"alice\"]");
            return;
        }
        let one_way = match d.direction.as_ref().map(|x| x.get_ref().as_str()) {
            None | Some("both") => false,
            Some("one_way") => true,
            Some(other) => {
                let help = format!("{}use \"both\" or \"one_way\"", file::guess(other, &["both", "one_way"]));
                self.err(d.direction.as_ref().unwrap().span(), format!("direction {other:?} is not a direction"))
                    .label("unknown direction")
                    .help(help);
                return;
            }
        };
        let drop = match d.mode.as_ref().map(|x| x.get_ref().as_str()) {
            None | Some("hold") => false,
            Some("drop") => true,
            Some(other) => {
                let help = format!("{}use \"hold\" or \"drop\"", file::guess(other, &["hold", "drop"]));
                self.err(d.mode.as_ref().unwrap().span(), format!("mode {other:?} is not a mode"))
                    .label("unknown mode")
                    .help(help);
                return;
            }
        };
        partitions.push(Partition { a, b, one_way, at, until, drop });
    }

    /// A fault that stops a teammate at a time: a crash (maybe restarted), a
    /// stall, or a crash in the middle of an append (file mode only).
    fn agent_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, kind, at, until, team) = (c.n, c.f.get_ref(), c.kind, c.at, c.until, c.team);
        if kind == FaultKind::TornWrite && !self.file_mode {
            self.err(d.kind.span(), format!("fault #{n}: a torn write tears an append to an inbox file"))
                .label("file inboxes only")
                .help("set mailbox = \"file\" in [policy], or use a crash fault");
            return;
        }
        if !self.needs(c, d.agent.is_some(), "agent") {
            return;
        }
        let Some(agent) = self.agent(d.agent.as_ref().unwrap(), team, "agent") else { return };
        if let (true, Some(written)) = (agent.is_lead(), &d.agent) {
            let verb = if kind == FaultKind::Stall { "stall" } else { "crash" };
            let first = team.names.get(1).map_or("alice", String::as_str);
            self.err(written.span(), format!("fault #{n}: the lead cannot {verb} in this version"))
                .label("the lead")
                .help(format!("pick a teammate, like agent = \"{first}\""));
            return;
        }
        if kind == FaultKind::Stall {
            if !self.needs(c, until.is_some(), "until") {
                return;
            }
            timed.push((at, Scheduled::Stall { agent, until: until.unwrap() }));
            return;
        }
        let restart_after = match &d.restart {
            Some(r) => match self.duration(r, "restart") {
                Some(m) => Some(m),
                None => return,
            },
            None => None,
        };
        timed.push((
            at,
            if kind == FaultKind::Crash {
                Scheduled::Crash { agent, restart_after }
            } else {
                Scheduled::TornWrite { agent, restart_after }
            },
        ));
    }

    /// A line that is not a message, written into an inbox file.
    fn junk_line_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, at, team) = (c.n, c.f.get_ref(), c.at, c.team);
        if !self.file_mode {
            self.err(d.kind.span(), format!("fault #{n}: a junk line is written into an inbox file"))
                .label("file inboxes only")
                .help("set mailbox = \"file\" in [policy]");
            return;
        }
        if !self.needs(c, d.agent.is_some(), "agent") {
            return;
        }
        let Some(agent) = self.agent(d.agent.as_ref().unwrap(), team, "agent") else { return };
        let text = d.text.as_ref().map_or("this line is not JSON", |t| t.get_ref().as_str());
        timed.push((at, Scheduled::JunkLine { agent, text: text.into() }));
    }

    /// A fault of Claude Code's runtime on one agent's inbox: a mark that
    /// fails (`count` deliveries of each entry), or a read that shows at
    /// most `count` entries.
    fn runtime_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, kind, at, team) = (c.n, c.f.get_ref(), c.kind, c.at, c.team);
        if !self.in_claude_code(c, format!("fault #{n}: {kind} acts on Claude Code's inbox arrays")) {
            return;
        }
        let (true, true) = (self.needs(c, d.agent.is_some(), "agent"), self.needs(c, d.count.is_some(), "count"))
        else {
            return;
        };
        let Some(agent) = self.agent(d.agent.as_ref().unwrap(), team, "agent") else { return };
        let count = d.count.as_ref().unwrap();
        let least = if kind == FaultKind::RepeatedDelivery { 2 } else { 1 };
        if *count.get_ref() < least {
            let what = if least == 2 { "a delivery repeated" } else { "entries shown" };
            self.err(count.span(), format!("fault #{n}: count = {} is too few {what}", count.get_ref()))
                .label(format!("at least {least}"))
                .help(format!("give count = {least} or more"));
            return;
        }
        let n = *count.get_ref();
        timed.push((
            at,
            match kind {
                FaultKind::RepeatedDelivery => Scheduled::RepeatedDelivery { agent, times: n },
                _ => Scheduled::DisplayCap { agent, shown: n },
            },
        ));
    }

    /// Whether the file's inboxes are Claude Code's, which a fault of their
    /// own needs; if not, says so (`why`).
    fn in_claude_code(&mut self, c: &FaultCtx, why: String) -> bool {
        if !self.claude_code {
            self.err(c.f.get_ref().kind.span(), why)
                .label("Claude Code inboxes only")
                .help("set mailbox = \"claude-code\" in [policy]");
        }
        self.claude_code
    }

    /// A teammate asks the lead for its own shutdown (claude-code#81464).
    fn misrouted_id(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, at, team) = (c.n, c.f.get_ref(), c.at, c.team);
        if !self.in_claude_code(c, format!("fault #{n}: misrouted_id is a request Claude Code's runtime lets through"))
        {
            return;
        }
        if !self.needs(c, d.agent.is_some(), "agent") {
            return;
        }
        let who = d.agent.as_ref().unwrap();
        let Some(agent) = self.agent(who, team, "agent") else { return };
        if agent == AgentId::LEAD {
            self.err(who.span(), format!("fault #{n}: the lead does not ask itself to stop"))
                .label("the lead")
                .help("name a teammate: it asks the lead for its own shutdown");
            return;
        }
        timed.push((at, Scheduled::MisroutedId { agent }));
    }

    /// A send to a name not on the team (claude-code#84494).
    fn phantom_send(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, at, team) = (c.n, c.f.get_ref(), c.at, c.team);
        if !self.in_claude_code(c, format!("fault #{n}: phantom_send writes to a Claude Code inbox")) {
            return;
        }
        let (true, true) = (self.needs(c, d.from.is_some(), "from"), self.needs(c, d.to.is_some(), "to")) else {
            return;
        };
        let Some(from) = self.agent(d.from.as_ref().unwrap(), team, "from") else { return };
        let to = d.to.as_ref().unwrap();
        let name = to.get_ref();
        let plausible = !name.is_empty()
            && name.len() <= 64
            && name.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_');
        if team.names.iter().any(|m| m == name) || name == "adversary" || !plausible {
            let why = if plausible { format!("{name:?} is on the team") } else { format!("{name:?} is not a name") };
            self.err(to.span(), format!("fault #{n}: a phantom send goes to a name not on the team; {why}"))
                .label("not a phantom")
                .help("name someone who is not on the team, like to = \"alcie\"; to message a member, use a [[step]] with do = \"message\"");
            return;
        }
        let text = d.text.as_ref().map_or("a message nobody will read", |t| t.get_ref().as_str());
        timed.push((at, Scheduled::PhantomSend { from, to: name.as_str().into(), text: text.into() }));
    }

    /// A message an adversary injects, claiming to be someone else.
    fn forge_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (n, d, at, team, labels) = (c.n, c.f.get_ref(), c.at, c.team, c.labels);
        let (true, true, true) = (
            self.needs(c, d.from.is_some(), "from"),
            self.needs(c, d.to.is_some(), "to"),
            self.needs(c, d.message.is_some(), "message"),
        ) else {
            return;
        };
        let (Some(claimed_from), Some(to)) =
            (self.agent(d.from.as_ref().unwrap(), team, "from"), self.agent(d.to.as_ref().unwrap(), team, "to"))
        else {
            return;
        };
        let m = d.message.as_ref().unwrap();
        let Some((message, id_label)) = self.forged_message(n, m, &d.message_fields, team, labels) else {
            return;
        };
        timed.push((at, Scheduled::Forge { claimed_from, to, message, id_label }));
    }

    /// The network delivering again a message it saw for a labelled request.
    fn replay_fault(&mut self, c: &FaultCtx, timed: &mut Vec<(Millis, Scheduled)>) {
        let (d, at, team, labels) = (c.f.get_ref(), c.at, c.team, c.labels);
        if !self.needs(c, d.request.is_some(), "request") {
            return;
        }
        let r = d.request.as_ref().unwrap();
        let Some(kind_of) = self.label(r, team, labels) else { return };
        let message_type = match &d.types {
            // By default the answer of the label's protocol.
            None => match Kind::parse(kind_of) {
                Some(k) => MessageType::Response(k),
                None => return,
            },
            Some(t) => match t.get_ref().to_vec().as_slice() {
                [one] => match MessageType::parse(one) {
                    Some(m) if !matches!(m, MessageType::Message | MessageType::Broadcast) => m,
                    _ => {
                        let protocol: Vec<&str> = message_types()
                            .iter()
                            .copied()
                            .filter(|m| {
                                !matches!(MessageType::parse(m), Some(MessageType::Message | MessageType::Broadcast))
                            })
                            .collect();
                        self.err(t.span(), format!("replay `type`: {one:?} is not a protocol message type"))
                            .label("not a protocol message")
                            .help(file::one_of(one, &protocol));
                        return;
                    }
                },
                _ => {
                    self.err(t.span(), "replay takes one message `type`")
                        .label(format!("{} types", t.get_ref().len()))
                        .help(
                            "give one, like type = \"shutdown_response\", or leave `type` out for the \
                             answer of the label's request",
                        );
                    return;
                }
            },
        };
        timed.push((at, Scheduled::Replay { label: r.get_ref().trim_start_matches('@').to_string(), message_type }));
    }

    /// A forged message: any message, with `"@label"` standing for a real id.
    fn forged_message(
        &mut self,
        n: usize,
        m: &S<toml::Value>,
        fields: &[(String, Range<usize>)],
        team: &Team,
        labels: &Labels,
    ) -> Option<(Message, Option<String>)> {
        // A problem with one field is shown at that field.
        let at = |key: &str| fields.iter().find(|(k, _)| k == key).map_or(m.span(), |(_, span)| span.clone());
        let mut value = m.get_ref().clone();
        let mut id_label = None;
        if let Some(toml::Value::String(id)) = value.get("request_id").cloned() {
            if let Some(label) = id.strip_prefix('@') {
                let spanned = S::new(at("request_id"), id.clone());
                self.label(&spanned, team, labels)?;
                id_label = Some(label.to_string());
                // A placeholder; the real id is filled in when the forgery fires.
                if let Some(t) = value.as_table_mut() {
                    t.insert("request_id".into(), toml::Value::String(uuid::Uuid::nil().to_string()));
                }
            }
        }
        let json = serde_json::to_value(&value).ok()?;
        match serde_json::from_value::<Message>(json) {
            Ok(msg) => Some((msg, id_label)),
            Err(e) => {
                // serde names the field it missed or did not know in backquotes.
                let e = e.to_string();
                let named = e.split('`').nth(1).filter(|k| fields.iter().any(|(f, _)| f == k));
                let span = named.map_or(m.span(), at);
                self.err(span, format!("fault #{n}: the forged message is not a valid message: {e}"))
                    .label(named.map_or("not a message", |_| "this field"))
                    .help(
                        "a forged message is written as the wire has it, like { type = \"shutdown_response\", \
                         request_id = \"@stop-alice\", approve = true }",
                    );
                None
            }
        }
    }
}

/// One fault being built: its place in the file, its kind, when it acts,
/// and the names it may use.
struct FaultCtx<'a> {
    n: usize,
    f: &'a S<FaultDoc>,
    kind: FaultKind,
    at: Millis,
    until: Option<Millis>,
    team: &'a Team,
    labels: &'a Labels,
}

/// A key as a file writes it, for a help that says to add it.
fn example(key: &str) -> String {
    match key {
        "at" => "at = \"1s\"".into(),
        "until" => "until = \"10s\"".into(),
        "delay" => "delay = \"5s\"".into(),
        "between" => "between = [\"lead\", \"alice\"]".into(),
        "agent" | "from" => format!("{key} = \"alice\""),
        "to" => "to = \"lead\"".into(),
        "request" => "request = \"stop-alice\"".into(),
        "message" => "message = { type = \"shutdown_response\", request_id = \"@stop-alice\", approve = true }".into(),
        _ => format!("{key} = \"...\""),
    }
}
