//! The lead's script: each `[[step]]`, its time, its action and the
//! labels that name its requests.

use super::*;

impl Builder<'_> {
    /// File mode: a broadcast whose copies alone would take the inbox files
    /// past their bound is refused here, where the file says so, rather than
    /// stopping the run at its first append past the bound. Each copy's line
    /// holds the text at least once, and a broadcast may reach every agent
    /// but its sender: text bytes × (team − 1) is a floor on what it writes.
    pub(super) fn broadcast_bound(&mut self, steps: &[S<StepDoc>], team: u64) {
        let bound = crate::inbox::MAX_HELD_BYTES;
        let reach = team.saturating_sub(1);
        for s in steps {
            let d = s.get_ref();
            if d.action.get_ref() != "broadcast" {
                continue;
            }
            let text = d.text.as_deref().map_or(0, str::len) as u64;
            let bytes = text.saturating_mul(reach);
            if bytes > bound {
                let message = format!(
                    "step #{}: a broadcast of {text} bytes of text to {reach} file inboxes writes at least {bytes} bytes, more than the inbox files may hold ({} MiB): shorten the text or the team",
                    d.n,
                    bound >> 20
                );
                self.err(d.action.span(), message)
                    .label("too much for the inbox files")
                    .help(format!("keep the text under {} bytes, or make the team smaller", bound / reach.max(1)));
            }
        }
    }

    /// `do = "answer"`: a response sent as written (see `Script::Answer`).
    fn answer_step(&mut self, n: usize, d: &StepDoc, team: &Team) -> Option<Script> {
        let span = d.action.span();
        let responses: Vec<&str> = Kind::ALL.iter().map(|k| k.spec().response).collect();
        let Some(t) = &d.message_type else {
            self.err(span, format!("step #{n}: an answer needs `type`: {}", responses.join(" or ")))
                .label("no `type`")
                .help(format!("add the response's type, like type = \"{}\"", responses[0]));
            return None;
        };
        let kind = match MessageType::parse(t.get_ref()) {
            Some(MessageType::Response(k)) => k,
            _ => {
                let other = t.get_ref();
                let message = format!("step #{n}: an answer's type {other:?} is not a response type");
                let help = file::one_of(other, &responses);
                self.err(t.span(), message).label("not a response type").help(help);
                return None;
            }
        };
        let Some(approve) = d.approve else {
            self.err(span, format!("step #{n}: an answer needs `approve = true` or `false`"))
                .label("no `approve`")
                .help("add approve = true or approve = false");
            return None;
        };
        let quote = match (&d.request, &d.request_id) {
            (Some(l), None) => Quote::Label(l.get_ref().trim_start_matches('@').into()),
            (None, Some(raw)) => Quote::Id(unissued_id(raw.get_ref())),
            _ => {
                let message = format!(
                    "step #{n}: an answer quotes one request: `request` (a label in this file) or `request_id` (an \
                     id as a team wrote it, which no request here has)"
                );
                let (found, fix) = if d.request.is_some() {
                    ("both given", "keep one of them: `request` for a label of this file, `request_id` for an id")
                } else {
                    ("neither given", "add one, like request = \"stop-alice\" (the label of a step that asked)")
                };
                self.err(span, message).label(found).help(fix);
                return None;
            }
        };
        // An answer goes to whoever may ask: the lead, for what only it asks.
        let to = match (&d.to, kind.spec().asker) {
            (Some(t), _) => self.agent(t, team, "to")?,
            (None, Asker::Lead { .. }) => AgentId::LEAD,
            (None, Asker::Teammate { .. }) => {
                let response = kind.spec().response;
                self.err(span, format!("step #{n}: a {response} answer needs `to` (who asked)"))
                    .label("no `to`")
                    .help(format!("add the teammate that asked, like to = \"alice\"; the team is {}", team.describe()));
                return None;
            }
        };
        Some(Script::Answer { to, kind, quote, approve, words: d.reason.as_deref().map(Text::from) })
    }

    /// A message type as the wire spells it, or an error listing them.
    pub(super) fn message_type(&mut self, t: &S<String>) -> Option<MessageType> {
        let found = MessageType::parse(t.get_ref());
        if found.is_none() {
            let help = file::one_of(t.get_ref(), message_types());
            self.err(t.span(), format!("unknown message type {:?}", t.get_ref()))
                .label("unknown message type")
                .help(help);
        }
        found
    }

    /// A step's `to`, which its action needs.
    fn required_to<'s>(&mut self, v: &'s Option<S<String>>, span: Range<usize>, what: &str) -> Option<&'s S<String>> {
        if v.is_none() {
            self.err(span, what.to_string()).label("no `to`").help("add who it goes to, like to = \"alice\"");
        }
        v.as_ref()
    }

    pub(super) fn step(
        &mut self,
        n: usize,
        s: &S<StepDoc>,
        team: &Team,
        limit: Millis,
        last_at: &mut Millis,
    ) -> Option<Step> {
        let d = s.get_ref();
        // A bad time is reported with the step's other problems, not instead.
        let at = self.duration(&d.at, &format!("step #{n} `at`"));
        if let Some(at) = at {
            self.step_time(n, &d.at, at, limit, last_at);
        }
        let label = d.label.as_ref().map(|l| Text::from(l.get_ref().as_str()));
        if let Some(l) = &d.label {
            if let Err(e) = crate::protocol::check_name(l.get_ref()) {
                let (label, help) = name_fix(&e);
                self.err(
                    l.span(),
                    format!("label: {e} (a label is a plain name like \"stop-alice\"; \"/\" is kept for automatic labels like alice/plan/1)"),
                )
                .label(label)
                .help(help);
            }
        }
        let from = match &d.from {
            Some(f) => self.agent(f, team, "from"),
            None => Some(AgentId::LEAD),
        };
        let action = d.action.get_ref().as_str();
        let asks = Kind::of_step(action);
        let ask_keys;
        let takes: &[&str] = match action {
            _ if asks.is_some() => {
                let words = asks.map_or("", |k| k.spec().request_words.key);
                ask_keys = ["to", "from", "label", words];
                &ask_keys
            }
            "message" => &["to", "from", "text"],
            "broadcast" => &["from", "text"],
            "request_plan" => &["to", "from", "text"],
            "respawn" => &["to", "from"],
            "answer" => &["to", "from", "type", "request", "request_id", "approve", "reason"],
            _ => &["to", "from", "label", "reason", "plan", "text"],
        };
        let present = [
            ("type", d.message_type.is_some()),
            ("request", d.request.is_some()),
            ("request_id", d.request_id.is_some()),
            ("approve", d.approve.is_some()),
            ("to", d.to.is_some()),
            ("label", d.label.is_some()),
            ("reason", d.reason.is_some()),
            ("plan", d.plan.is_some()),
            ("text", d.text.is_some()),
        ];
        let mut misplaced = false;
        for (key, here) in present {
            if here && !takes.contains(&key) {
                // The reader keeps no place for these keys: the action is what they do not fit.
                self.err(d.action.span(), format!("step #{n}: `{key}` does not apply to {action}"))
                    .label(format!("takes no `{key}`"))
                    .help(format!(
                        "remove `{key}`: {action} takes {}",
                        takes.iter().filter(|k| !k.is_empty()).copied().collect::<Vec<_>>().join(", ")
                    ));
                misplaced = true;
            }
        }
        if misplaced {
            return None;
        }
        let script = match action {
            _ if asks.is_some() => {
                let kind = asks?;
                self.ask_step(n, d, kind, team, label)?
            }
            "message" => {
                let to = self.required_to(&d.to, d.action.span(), &format!("step #{n}: a message needs `to`"))?;
                let to = self.agent(to, team, "to")?;
                Script::Say { to: Address::Agent(to), text: d.text.clone().unwrap_or_default().into() }
            }
            "broadcast" => Script::Say { to: Address::Everyone, text: d.text.clone().unwrap_or_default().into() },
            "request_plan" => {
                let to = self.required_to(&d.to, d.action.span(), &format!("step #{n}: request_plan needs `to`"))?;
                let to = self.agent(to, team, "to")?;
                let text = d.text.clone().unwrap_or_else(|| DEFAULT_PLAN_REQUEST.to_string());
                Script::AskPlan { to, text: text.into() }
            }
            "answer" => self.answer_step(n, d, team)?,
            "respawn" => {
                let to = self.required_to(&d.to, d.action.span(), &format!("step #{n}: respawn needs `to`"))?;
                let to = self.agent(to, team, "to")?;
                if from != Some(AgentId::LEAD) || to.is_lead() {
                    let message =
                        format!("step #{n}: the lead respawns a teammate: `from` must be the lead and `to` a teammate");
                    self.err(d.action.span(), message)
                        .label("not the lead respawning a teammate")
                        .help("leave `from` out (the lead) and name a teammate in `to`, like to = \"alice\"");
                    return None;
                }
                Script::Respawn { to }
            }
            other => {
                let help = file::one_of(other, &step_actions());
                self.err(d.action.span(), format!("step #{n}: unknown action {other:?}"))
                    .label("unknown action")
                    .help(help);
                return None;
            }
        };
        Some(Step { at: at?, agent: from?, script })
    }

    /// A step that asks a protocol's question (`do = "shutdown"`,
    /// `do = "submit_plan"`): the lead asks what only it may ask, of the
    /// teammate `to`; a teammate asks what teammates ask, of the lead unless
    /// `to` names a peer.
    fn ask_step(&mut self, n: usize, d: &StepDoc, kind: Kind, team: &Team, label: Option<Text>) -> Option<Script> {
        let spec = kind.spec();
        let span = d.action.span();
        // Who is asked, and with what words: each checked, whatever the other is.
        let to = match spec.asker {
            Asker::Lead { .. } => self
                .required_to(&d.to, span.clone(), &format!("step #{n}: a {} needs `to`", spec.step))
                .and_then(|to| self.agent(to, team, "to")),
            Asker::Teammate { .. } => {
                if d.from.is_none() {
                    self.err(span.clone(), format!("step #{n}: {} needs `from` (the teammate asking)", spec.step))
                        .label("no `from`")
                        .help("add the teammate that asks, like from = \"alice\"");
                    None
                } else {
                    match &d.to {
                        Some(t) => self.agent(t, team, "to"),
                        None => Some(AgentId::LEAD),
                    }
                }
            }
        };
        let key = spec.request_words.key;
        if let Some(blank) = d.words(key).filter(|w| spec.request_words.required && crate::input::says_nothing(w)) {
            self.err(span.clone(), format!("step #{n}: `{key}` {blank:?} says nothing"))
                .label(format!("an empty {key}"))
                .help(format!("name the {key}, like {key} = \"a {key}\", or leave the key out for a placeholder"));
            return None;
        }
        let to = to?;
        let words = d.words(key).map(Text::from);
        // Words a request must carry, a step may leave out: it asks with a
        // placeholder ("a plan"), as a learner's first file does.
        let words = match words {
            None if spec.request_words.required => Some(Text::from(format!("a {key}").as_str())),
            w => w,
        };
        Some(Script::Ask { kind, to, words, label })
    }

    /// Steps come in time order and within the run.
    fn step_time(&mut self, n: usize, written: &S<String>, at: Millis, limit: Millis, last_at: &mut Millis) {
        if at < *last_at {
            let message = format!(
                "step #{n} at {} is in the past: the step before it is at {}; list steps in time order",
                human(at),
                human(*last_at)
            );
            self.err(written.span(), message)
                .label(format!("before {}", human(*last_at)))
                .help("move this step after the one at its time, or give it a later `at`");
        }
        if at > limit {
            self.err(
                written.span(),
                format!("step #{n} at {} comes after the end of the run ({})", human(at), human(limit)),
            )
            .label(format!("after {}", human(limit)))
            .help("give an earlier `at`, or raise the file's `end` or `cap`");
        }
        *last_at = at.max(*last_at);
    }

    /// A label this file can refer to: a step's, or an automatic `<teammate>/<kind>/<n>`.
    fn label_kind(&self, label: &str, team: &Team, labels: &Labels) -> Option<&'static str> {
        if let Some(k) = labels.get(label) {
            return Some(k);
        }
        let parts: Vec<&str> = label.split('/').collect();
        match parts.as_slice() {
            [who, kind, n]
                if team.id(who).is_some_and(|id| !id.is_lead()) && n.parse::<u32>().is_ok_and(|n| n >= 1) =>
            {
                Kind::parse(kind).map(Kind::as_str)
            }
            _ => None,
        }
    }

    pub(super) fn label(&mut self, s: &S<String>, team: &Team, labels: &Labels) -> Option<&'static str> {
        let l = s.get_ref().trim_start_matches('@');
        let kind = self.label_kind(l, team, labels);
        if kind.is_none() && !self.hidden.contains(l) {
            let known: Vec<String> = labels.keys().take(LISTED + 1).cloned().collect();
            let known = match known.len() {
                0 => "none".to_string(),
                n if n > LISTED => format!("{} and {} more", known[..LISTED].join(", "), labels.len() - LISTED),
                _ => known.join(", "),
            };
            let guess = if labels.len() <= 1000 {
                let names: Vec<&str> = labels.keys().map(String::as_str).collect();
                file::guess(l, &names)
            } else {
                String::new()
            };
            self.err(s.span(), format!("unknown label {:?}", s.get_ref()))
                .label("no such label")
                .help(format!("{guess}step labels are {known}; automatic ones look like \"alice/plan/1\""));
        }
        kind
    }
}
