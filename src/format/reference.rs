//! Every key a scenario file takes, declared once: the reference page
//! (docs/reference.md) is generated from this table, and a test holds it
//! to the reader's own key lists, so neither can drift from the other.
//!
//! A `[[fault]]` takes `kind` and then the keys of its kind
//! ([`FaultKind::keys`](crate::world::FaultKind::keys)); the same key means
//! different things to different kinds (`count` on a link fault, on a
//! `display_cap`), so each family of kinds has a table of its own, named
//! with the kinds it covers (`[[fault]] kind = "crash"`).

/// One key of one table of a scenario file.
pub struct Key {
    /// The table it belongs to, as a file writes it: one of [`TABLES`].
    pub table: &'static str,
    pub key: &'static str,
    /// The default when left out ("—" when the key is required or has none).
    pub default: &'static str,
    /// What it takes, briefly: "duration", "true or false", "agent name", ...
    pub values: &'static str,
    /// One example as a file writes it, e.g. `shutdown_timeout = "30s"`.
    pub example: &'static str,
    /// What it does, in one short sentence, in plain words.
    pub meaning: &'static str,
}

const TOP: &str = "top level";
const POLICY: &str = "[policy]";
const DEFENCES: &str = "[policy.defences]";
const LEAD: &str = "[lead]";
const TEAMMATE: &str = "[[teammate]]";
const WORK: &str = "work item";
const STEP: &str = "[[step]]";
const FAULT: &str = "[[fault]]";
const LINK: &str = r#"[[fault]] kind = "delay", "drop", "duplicate" or "reorder""#;
const PARTITION: &str = r#"[[fault]] kind = "partition""#;
const CRASH: &str = r#"[[fault]] kind = "crash""#;
const STALL: &str = r#"[[fault]] kind = "stall""#;
const FORGE: &str = r#"[[fault]] kind = "forge""#;
const REPLAY: &str = r#"[[fault]] kind = "replay""#;
const TORN_WRITE: &str = r#"[[fault]] kind = "torn_write""#;
const JUNK_LINE: &str = r#"[[fault]] kind = "junk_line""#;
const RUNTIME: &str = r#"[[fault]] kind = "repeated_delivery" or "display_cap""#;
const PHANTOM_SEND: &str = r#"[[fault]] kind = "phantom_send""#;
const MISROUTED_ID: &str = r#"[[fault]] kind = "misrouted_id""#;
const EXPECT: &str = "[[expect]]";

/// The tables in the order the page shows them.
pub const TABLES: &[&str] = &[
    TOP,
    POLICY,
    DEFENCES,
    LEAD,
    TEAMMATE,
    WORK,
    STEP,
    FAULT,
    LINK,
    PARTITION,
    CRASH,
    STALL,
    FORGE,
    REPLAY,
    TORN_WRITE,
    JUNK_LINE,
    RUNTIME,
    PHANTOM_SEND,
    MISROUTED_ID,
    EXPECT,
];

const ANSWERS: &str = "approve, reject or ignore, or a list of them";
const NO_DEFAULT: &str = "—";

pub const KEYS: &[Key] = &[
    // The file's top level.
    Key {
        table: TOP,
        key: "name",
        default: NO_DEFAULT,
        values: "text",
        example: r#"name = "my-scenario""#,
        meaning: "Required: the scenario's short name in reports; not empty, and without control characters.",
    },
    Key {
        table: TOP,
        key: "about",
        default: NO_DEFAULT,
        values: "text",
        example: r#"about = "Bob is asked to stop while writing.""#,
        meaning: "What the scenario teaches, in a few sentences; reports fold its line breaks into one line.",
    },
    Key {
        table: TOP,
        key: "seed",
        default: "1",
        values: "whole number, 0 or more",
        example: "seed = 7",
        meaning: "Seed of everything random in the run; `--seed` overrides it and `--seeds` ignores it.",
    },
    Key {
        table: TOP,
        key: "end",
        default: NO_DEFAULT,
        values: "duration, at most the cap",
        example: r#"end = "30s""#,
        meaning: "Stop the run at this virtual time, even if requests are still pending.",
    },
    Key {
        table: TOP,
        key: "cap",
        default: r#""1h""#,
        values: r#"duration, at most "1y""#,
        example: r#"cap = "2h""#,
        meaning: "A run that has not settled by this virtual time is stopped; `--cap` overrides it.",
    },
    Key {
        table: TOP,
        key: "policy",
        default: "every key at its default",
        values: "a table",
        example: "[policy]",
        meaning: "The protocol's timeouts and defaults on expiry, the defences, the latency and the inboxes.",
    },
    Key {
        table: TOP,
        key: "lead",
        default: "every key at its default",
        values: "a table",
        example: "[lead]",
        meaning: "How the lead answers plans, and whether it asks again after a rejected shutdown.",
    },
    Key {
        table: TOP,
        key: "teammate",
        default: "no teammates",
        values: "a list of tables",
        example: "[[teammate]]",
        meaning: "One teammate, or `count` identical ones: its name, its answers and its work.",
    },
    Key {
        table: TOP,
        key: "step",
        default: "no steps",
        values: "a list of tables",
        example: "[[step]]",
        meaning: "One scripted action at a virtual time; steps are listed in time order.",
    },
    Key {
        table: TOP,
        key: "fault",
        default: "no faults",
        values: "a list of tables",
        example: "[[fault]]",
        meaning: "One fault to inject: messages delayed, lost, doubled or forged, a partition, a crash, a stall.",
    },
    Key {
        table: TOP,
        key: "expect",
        default: "no expectations",
        values: "a list of tables",
        example: "[[expect]]",
        meaning: "One thing that must hold at the end; the oracle's invariants are checked anyway.",
    },
    // [policy]: each protocol's timeout and default on expiry, then the rest.
    Key {
        table: POLICY,
        key: "shutdown_timeout",
        default: r#""60s""#,
        values: r#"duration up to the cap (not "0s"), or "never""#,
        example: r#"shutdown_timeout = "30s""#,
        meaning: "How long a shutdown request waits for its answer, counted from when it is sent.",
    },
    Key {
        table: POLICY,
        key: "plan_timeout",
        default: r#""120s""#,
        values: r#"duration up to the cap (not "0s"), or "never""#,
        example: r#"plan_timeout = "2m""#,
        meaning: "How long a plan approval request waits for its answer, counted from when it is sent.",
    },
    Key {
        table: POLICY,
        key: "task_timeout",
        default: r#""60s""#,
        values: r#"duration up to the cap (not "0s"), or "never""#,
        example: r#"task_timeout = "10s""#,
        meaning: "How long a task offer waits for the teammate's answer, counted from when it is sent.",
    },
    Key {
        table: POLICY,
        key: "on_shutdown_timeout",
        default: r#""kill""#,
        values: "kill or keep",
        example: r#"on_shutdown_timeout = "keep""#,
        meaning: "What an expired shutdown request does: kill force-stops the teammate; keep lets it carry on.",
    },
    Key {
        table: POLICY,
        key: "on_plan_timeout",
        default: r#""reject""#,
        values: "reject or approve",
        example: r#"on_plan_timeout = "approve""#,
        meaning: "What an expired plan request does: reject keeps the author's plan gate closed; approve opens it.",
    },
    Key {
        table: POLICY,
        key: "on_task_timeout",
        default: r#""reassign""#,
        values: "reassign or drop",
        example: r#"on_task_timeout = "drop""#,
        meaning: "What an expired task offer does: reassign offers it to the next idle teammate; drop lets it go.",
    },
    Key {
        table: POLICY,
        key: "strict_hierarchy",
        default: "true",
        values: "true or false",
        example: "strict_hierarchy = false",
        meaning: "true: a teammate may not send another teammate a blocking request (a plan); such a send is refused.",
    },
    Key {
        table: POLICY,
        key: "latency",
        default: r#""1ms""#,
        values: r#"duration, or a range "lo..hi""#,
        example: r#"latency = "1ms..20ms""#,
        meaning: "How long every message takes to arrive; a range draws each message's time from the seed.",
    },
    Key {
        table: POLICY,
        key: "defences",
        default: "every switch on",
        values: "a table of switches",
        example: "[policy.defences]",
        meaning: "The checks made before a message is applied; switch one off to see what it prevents.",
    },
    Key {
        table: POLICY,
        key: "timeouts",
        default: "true",
        values: "true or false",
        example: "timeouts = false",
        meaning: r#"false: no request of any protocol ever expires, as if every timeout were "never"."#,
    },
    Key {
        table: POLICY,
        key: "deadlocks",
        default: r#""allow""#,
        values: "allow or fail",
        example: r#"deadlocks = "fail""#,
        meaning: "fail: any deadlock the run goes through fails it, unless an `[[expect]]` names that deadlock.",
    },
    Key {
        table: POLICY,
        key: "mailbox",
        default: r#""memory""#,
        values: "memory, file or claude-code",
        example: r#"mailbox = "file""#,
        meaning: "Where inboxes live: in memory, one JSON Lines file per agent, or Claude Code's JSON arrays.",
    },
    Key {
        table: POLICY,
        key: "drain",
        default: r#""truncate""#,
        values: "truncate or offset",
        example: r#"drain = "offset""#,
        meaning: "File inboxes only: truncate after each read, losing lines appended meanwhile, or commit an offset.",
    },
    Key {
        table: POLICY,
        key: "inbox_poll",
        default: r#""100ms" (file), "1s" (claude-code)"#,
        values: r#"duration, at least "1ms""#,
        example: r#"inbox_poll = "50ms""#,
        meaning: "File and Claude Code inboxes: an owner reads its inbox at the next multiple of this.",
    },
    Key {
        table: POLICY,
        key: "read_cost",
        default: r#""1ms""#,
        values: "duration",
        example: r#"read_cost = "5ms""#,
        meaning: "File and Claude Code inboxes: the virtual time every read takes, even of an empty inbox.",
    },
    Key {
        table: POLICY,
        key: "read_cost_per_kib",
        default: r#""0ms""#,
        values: "duration",
        example: r#"read_cost_per_kib = "1ms""#,
        meaning: "File and Claude Code inboxes: what each KiB of the inbox adds to a read's time.",
    },
    Key {
        table: POLICY,
        key: "prune",
        default: "false",
        values: "true or false",
        example: "prune = true",
        meaning: r#"File inboxes with drain = "offset": after each read, cut what was read from the file's front."#,
    },
    Key {
        table: POLICY,
        key: "lock",
        default: r#""on""#,
        values: "on or off",
        example: r#"lock = "off""#,
        meaning: "Claude Code inboxes only: off lets rewrites skip the lock, so an entry written mid-read is lost.",
    },
    Key {
        table: POLICY,
        key: "mark_read",
        default: r#""shown""#,
        values: "shown or all",
        example: r#"mark_read = "all""#,
        meaning: "Claude Code inboxes only: all also marks read the entries a read never showed, so nobody sees them.",
    },
    Key {
        table: POLICY,
        key: "recipients",
        default: r#""team""#,
        values: "team or any",
        example: r#"recipients = "any""#,
        meaning: "Claude Code inboxes only: team refuses a send to a name not on the team; any writes it anyway.",
    },
    // [policy.defences]
    Key {
        table: DEFENCES,
        key: "kind_check",
        default: "true",
        values: "true or false",
        example: "kind_check = false",
        meaning: "A response counts only if it is of its request's kind; otherwise it is ignored as kind_mismatch.",
    },
    Key {
        table: DEFENCES,
        key: "sender_check",
        default: "true",
        values: "true or false",
        example: "sender_check = false",
        meaning: "Responses count only from the request's target, requests only from who may ask; else wrong_sender.",
    },
    Key {
        table: DEFENCES,
        key: "sender_auth",
        default: "true",
        values: "true or false",
        example: "sender_auth = false",
        meaning: "A message's sender is who the router saw send it; off, the `from` the message claims is believed.",
    },
    Key {
        table: DEFENCES,
        key: "pending_check",
        default: "true",
        values: "true or false",
        example: "pending_check = false",
        meaning: "Only a pending request, before its deadline, can change; \
             otherwise a response is ignored as not_pending or late.",
    },
    Key {
        table: DEFENCES,
        key: "deadline_check",
        default: "true",
        values: "true or false",
        example: "deadline_check = false",
        meaning: "A request that reaches its receiver at or after the deadline it carries is ignored as expired.",
    },
    Key {
        table: DEFENCES,
        key: "incarnation_check",
        default: "true",
        values: "true or false",
        example: "incarnation_check = false",
        meaning: "A request sent before its receiver crashed and restarted is ignored as stale_incarnation.",
    },
    // [lead]
    Key {
        table: LEAD,
        key: "on_plan",
        default: r#""approve""#,
        values: ANSWERS,
        example: r#"on_plan = ["reject", "approve"]"#,
        meaning: "How the lead answers the plans sent to it; a list is used in order, its last answer repeating.",
    },
    Key {
        table: LEAD,
        key: "feedback",
        default: r#""rejected""#,
        values: "text",
        example: r#"feedback = "back up the table first""#,
        meaning: "The feedback the lead sends with a plan it rejects.",
    },
    Key {
        table: LEAD,
        key: "approval_feedback",
        default: NO_DEFAULT,
        values: "text",
        example: r#"approval_feedback = "go ahead, but back up first""#,
        meaning: "The feedback the lead sends with a plan it approves.",
    },
    Key {
        table: LEAD,
        key: "ask_again_on_reject",
        default: "0",
        values: "whole number, 0 to 100",
        example: "ask_again_on_reject = 1",
        meaning: "How many shutdown rejections from one teammate the lead answers by asking it again at once.",
    },
    // [[teammate]]
    Key {
        table: TEAMMATE,
        key: "name",
        default: NO_DEFAULT,
        values: "agent name: letters, digits, _ and -, up to 64",
        example: r#"name = "alice""#,
        meaning: "Required: its name, unique in the team even ignoring case; lead and a few other names are reserved.",
    },
    Key {
        table: TEAMMATE,
        key: "on_shutdown",
        default: r#""approve""#,
        values: ANSWERS,
        example: r#"on_shutdown = ["reject", "approve"]"#,
        meaning: "How it answers shutdown requests; a list is used in order, its last answer repeating.",
    },
    Key {
        table: TEAMMATE,
        key: "reject_reason",
        default: NO_DEFAULT,
        values: "text",
        example: r#"reject_reason = "tests running""#,
        meaning: "The reason sent with a shutdown rejection; required when `on_shutdown` can reject.",
    },
    Key {
        table: TEAMMATE,
        key: "on_plan",
        default: r#""approve""#,
        values: ANSWERS,
        example: r#"on_plan = "reject""#,
        meaning: r#"How it answers a peer's plan (strict_hierarchy = false only); it rejects with "rejected by peer"."#,
    },
    Key {
        table: TEAMMATE,
        key: "on_task",
        default: r#""approve""#,
        values: "approve (accept), reject (decline) or ignore, or a list of them",
        example: r#"on_task = ["reject", "approve"]"#,
        meaning: "How it answers the lead's task offers; an accepted task becomes its work after what it has.",
    },
    Key {
        table: TEAMMATE,
        key: "decline_reason",
        default: NO_DEFAULT,
        values: "text",
        example: r#"decline_reason = "busy with the migration""#,
        meaning: "The reason sent with a declined task; required when `on_task` can decline.",
    },
    Key {
        table: TEAMMATE,
        key: "task_steps",
        default: "2",
        values: "whole number, 1 to 1000000",
        example: "task_steps = 4",
        meaning: "How many steps, of 500 ms each, an accepted task's write takes.",
    },
    Key {
        table: TEAMMATE,
        key: "require_plan",
        default: "false",
        values: "true or false",
        example: "require_plan = true",
        meaning: "true: it submits its plan at start, and its first write, edit or shell waits for approval.",
    },
    Key {
        table: TEAMMATE,
        key: "plan",
        default: r#""<name>'s plan""#,
        values: "text",
        example: r#"plan = "DROP TABLE legacy_sessions""#,
        meaning: r#"The plan it submits; a revision is sent as "<plan> (revision N)"."#,
    },
    Key {
        table: TEAMMATE,
        key: "work",
        default: "[] (no work)",
        values: "a list of work items",
        example: r#"work = [{ write = "src/a.rs", steps = 3 }]"#,
        meaning: "The actions it performs, in order, from the start of the run.",
    },
    Key {
        table: TEAMMATE,
        key: "max_revisions",
        default: "3",
        values: "whole number, 0 to 1000",
        example: "max_revisions = 1",
        meaning: "How many times it revises and resubmits a rejected plan before giving up.",
    },
    Key {
        table: TEAMMATE,
        key: "count",
        default: "— (one teammate)",
        values: "whole number, 1 to 100000",
        example: "count = 100",
        meaning: "Make this many identical teammates, named <name>-1, <name>-2 and so on.",
    },
    // A work item: exactly one of write, edit, shell or read.
    Key {
        table: WORK,
        key: "write",
        default: NO_DEFAULT,
        values: "file path",
        example: r#"{ write = "src/a.rs" }"#,
        meaning: "Write this file, a step at a time: complete when every step is done, partial otherwise.",
    },
    Key {
        table: WORK,
        key: "edit",
        default: NO_DEFAULT,
        values: "file path",
        example: r#"{ edit = "README.md" }"#,
        meaning: "Edit this file; recorded as a write is, complete or partial.",
    },
    Key {
        table: WORK,
        key: "shell",
        default: NO_DEFAULT,
        values: "command text",
        example: r#"{ shell = "cargo test" }"#,
        meaning: "Run this command: a mutating action that leaves no file.",
    },
    Key {
        table: WORK,
        key: "read",
        default: NO_DEFAULT,
        values: "file path",
        example: r#"{ read = "schema.sql" }"#,
        meaning: "Read this file: not mutating, so it runs while the plan gate is closed.",
    },
    Key {
        table: WORK,
        key: "steps",
        default: "1",
        values: "whole number, 1 to 1000000",
        example: r#"{ write = "a.md", steps = 4 }"#,
        meaning: "How many steps the action takes.",
    },
    Key {
        table: WORK,
        key: "step_time",
        default: r#""100ms""#,
        values: "duration",
        example: r#"{ shell = "make", step_time = "500ms" }"#,
        meaning: "The virtual time each step takes.",
    },
    // [[step]]
    Key {
        table: STEP,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "1s""#,
        meaning: "Required: the virtual time of the action, no earlier than the step before it.",
    },
    Key {
        table: STEP,
        key: "do",
        default: NO_DEFAULT,
        values: "shutdown, submit_plan, assign_task, request_plan, respawn, answer, message or broadcast",
        example: r#"do = "shutdown""#,
        meaning: "Required: the action the step performs.",
    },
    Key {
        table: STEP,
        key: "to",
        default: r#""lead" (submit_plan, and a shutdown or task answer)"#,
        values: r#"agent name, or a group like "worker-*""#,
        example: r#"to = "alice""#,
        meaning: "Who it goes to, required for shutdown, assign_task, request_plan, respawn and message; \
             a group repeats the step per member.",
    },
    Key {
        table: STEP,
        key: "from",
        default: r#""lead""#,
        values: r#"agent name, or a group like "worker-*""#,
        example: r#"from = "alice""#,
        meaning: "Who acts; required for submit_plan, and must be the lead for respawn.",
    },
    Key {
        table: STEP,
        key: "label",
        default: "automatic, like alice/shutdown/1",
        values: "plain name, unique in the file",
        example: r#"label = "stop-alice""#,
        meaning: "Names the request a shutdown, submit_plan or assign_task makes, for faults and expectations.",
    },
    Key {
        table: STEP,
        key: "reason",
        default: NO_DEFAULT,
        values: "text",
        example: r#"reason = "release is cut""#,
        meaning: "shutdown: the reason sent with the request; answer: the reason or feedback sent with the answer.",
    },
    Key {
        table: STEP,
        key: "plan",
        default: r#""a plan""#,
        values: "text",
        example: r#"plan = "rename the users table""#,
        meaning: "submit_plan only: the plan sent.",
    },
    Key {
        table: STEP,
        key: "task",
        default: r#""a task""#,
        values: "text",
        example: r#"task = "docs/api.md""#,
        meaning: "assign_task only: the task, which names the file an accepting teammate writes.",
    },
    Key {
        table: STEP,
        key: "text",
        default: "\"\" (message, broadcast); \
             \"submit a plan and wait for approval before changing anything\" (request_plan)",
        values: "text",
        example: r#"text = "tests are green""#,
        meaning: "message and broadcast: the text sent; request_plan: what the lead says.",
    },
    Key {
        table: STEP,
        key: "type",
        default: NO_DEFAULT,
        values: "shutdown_response, plan_approval_response or task_response",
        example: r#"type = "shutdown_response""#,
        meaning: "answer only, and required there: the type of the response sent.",
    },
    Key {
        table: STEP,
        key: "request",
        default: NO_DEFAULT,
        values: "a request label, like stop-alice or alice/plan/1",
        example: r#"request = "stop-alice""#,
        meaning: "answer only: the request the response quotes, by its label; give this or `request_id`.",
    },
    Key {
        table: STEP,
        key: "request_id",
        default: NO_DEFAULT,
        values: "an id as a team wrote it",
        example: r#"request_id = "req-17""#,
        meaning: "answer only: quote an id no request of this run has, as a real team wrote it.",
    },
    Key {
        table: STEP,
        key: "approve",
        default: NO_DEFAULT,
        values: "true or false",
        example: "approve = true",
        meaning: "answer only, and required there: the answer the response carries.",
    },
    // [[fault]]: `kind`, then the keys of that kind.
    Key {
        table: FAULT,
        key: "kind",
        default: NO_DEFAULT,
        values: "delay, drop, duplicate, reorder, partition, crash, stall, forge, replay, torn_write, junk_line, \
             repeated_delivery, display_cap, phantom_send or misrouted_id",
        example: r#"kind = "drop""#,
        meaning: "Required: which fault; it decides which other keys the fault takes, in the tables below.",
    },
    // Link faults: the messages on a link are delayed, lost, doubled or overtaken.
    Key {
        table: LINK,
        key: "at",
        default: r#""0s""#,
        values: "duration",
        example: r#"at = "500ms""#,
        meaning: "Acts on messages sent from this time.",
    },
    Key {
        table: LINK,
        key: "until",
        default: "never",
        values: "duration, after `at`",
        example: r#"until = "10s""#,
        meaning: "Acts on messages sent until this time (excluded).",
    },
    Key {
        table: LINK,
        key: "from",
        default: "any sender",
        values: "agent name",
        example: r#"from = "alice""#,
        meaning: "Only messages from this agent, the real sender: a forged message comes from the adversary.",
    },
    Key {
        table: LINK,
        key: "to",
        default: "any recipient",
        values: "agent name",
        example: r#"to = "lead""#,
        meaning: "Only messages to this agent.",
    },
    Key {
        table: LINK,
        key: "type",
        default: "any type",
        values: "a message type, or a list of them",
        example: r#"type = "shutdown_response""#,
        meaning: "Only messages of these types.",
    },
    Key {
        table: LINK,
        key: "request",
        default: "any request",
        values: "a request label",
        example: r#"request = "stop-alice""#,
        meaning: "Only messages quoting this labelled request's id.",
    },
    Key {
        table: LINK,
        key: "count",
        default: "no limit",
        values: "whole number, 1 or more",
        example: "count = 1",
        meaning: "Act on at most this many matching messages.",
    },
    Key {
        table: LINK,
        key: "probability",
        default: "1.0",
        values: "number from 0 to 1",
        example: "probability = 0.5",
        meaning: "The chance of acting on each matching message, drawn from the seed.",
    },
    Key {
        table: LINK,
        key: "delay",
        default: NO_DEFAULT,
        values: r#"duration, or a range "lo..hi""#,
        example: r#"delay = "5s""#,
        meaning: "delay only, and required there: the time added to each message's latency.",
    },
    // partition
    Key {
        table: PARTITION,
        key: "at",
        default: r#""0s""#,
        values: "duration",
        example: r#"at = "500ms""#,
        meaning: "When the partition starts.",
    },
    Key {
        table: PARTITION,
        key: "until",
        default: "never",
        values: "duration, after `at`",
        example: r#"until = "10s""#,
        meaning: "When the partition heals; left out, it lasts to the end of the run.",
    },
    Key {
        table: PARTITION,
        key: "between",
        default: NO_DEFAULT,
        values: "two agent names",
        example: r#"between = ["lead", "alice"]"#,
        meaning: "Required: the two agents whose messages to each other cannot pass.",
    },
    Key {
        table: PARTITION,
        key: "direction",
        default: r#""both""#,
        values: "both or one_way",
        example: r#"direction = "one_way""#,
        meaning: "one_way: only messages from the first agent to the second are cut.",
    },
    Key {
        table: PARTITION,
        key: "mode",
        default: r#""hold""#,
        values: "hold or drop",
        example: r#"mode = "drop""#,
        meaning: "hold: messages wait and arrive when it heals; drop: they are lost.",
    },
    // crash
    Key {
        table: CRASH,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "1200ms""#,
        meaning: "Required: when the teammate crashes.",
    },
    Key {
        table: CRASH,
        key: "agent",
        default: NO_DEFAULT,
        values: "teammate name",
        example: r#"agent = "alice""#,
        meaning: "Required: the teammate that crashes; the lead cannot crash.",
    },
    Key {
        table: CRASH,
        key: "restart",
        default: "never",
        values: "duration",
        example: r#"restart = "5s""#,
        meaning: "Restart the teammate this long after the crash; left out, the crash is final.",
    },
    // stall
    Key {
        table: STALL,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "1s""#,
        meaning: "Required: when the teammate stops reading its inbox.",
    },
    Key {
        table: STALL,
        key: "until",
        default: NO_DEFAULT,
        values: "duration, after `at`",
        example: r#"until = "5s""#,
        meaning: "Required: when the stall ends and what waited is handed over, in order.",
    },
    Key {
        table: STALL,
        key: "agent",
        default: NO_DEFAULT,
        values: "teammate name",
        example: r#"agent = "alice""#,
        meaning: "Required: the teammate that stalls; the lead cannot stall.",
    },
    // forge
    Key {
        table: FORGE,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "2s""#,
        meaning: "Required: when an adversary, not on the team, injects the message.",
    },
    Key {
        table: FORGE,
        key: "from",
        default: NO_DEFAULT,
        values: "agent name",
        example: r#"from = "bob""#,
        meaning: "Required: the agent the message claims to come from.",
    },
    Key {
        table: FORGE,
        key: "to",
        default: NO_DEFAULT,
        values: "agent name",
        example: r#"to = "lead""#,
        meaning: "Required: the agent the message is sent to.",
    },
    Key {
        table: FORGE,
        key: "message",
        default: NO_DEFAULT,
        values: "an inline table, as the wire has it",
        example: r#"message = { type = "shutdown_response", request_id = "@stop-alice", approve = true }"#,
        meaning: r#"Required: the forged message; a request_id "@label" stands for that request's real id."#,
    },
    // replay
    Key {
        table: REPLAY,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "10s""#,
        meaning: "Required: when the network delivers the message again.",
    },
    Key {
        table: REPLAY,
        key: "request",
        default: NO_DEFAULT,
        values: "a request label",
        example: r#"request = "stop-alice""#,
        meaning: "Required: the labelled request whose message is delivered again.",
    },
    Key {
        table: REPLAY,
        key: "type",
        default: "the response of the request's protocol",
        values: "one protocol message type",
        example: r#"type = "shutdown_request""#,
        meaning: "Which of the request's messages is replayed: the last of this type seen.",
    },
    // torn_write (file inboxes only)
    Key {
        table: TORN_WRITE,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "1s""#,
        meaning: "Required: from this time, the teammate's next append to an inbox file is torn.",
    },
    Key {
        table: TORN_WRITE,
        key: "agent",
        default: NO_DEFAULT,
        values: "teammate name",
        example: r#"agent = "alice""#,
        meaning: "Required: the writer, which crashes as its append lands half-written.",
    },
    Key {
        table: TORN_WRITE,
        key: "restart",
        default: "never",
        values: "duration",
        example: r#"restart = "5s""#,
        meaning: "Restart the writer this long after its crash, as for a crash fault.",
    },
    // junk_line (file inboxes only)
    Key {
        table: JUNK_LINE,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "1s""#,
        meaning: "Required: when the line is appended.",
    },
    Key {
        table: JUNK_LINE,
        key: "agent",
        default: NO_DEFAULT,
        values: "agent name",
        example: r#"agent = "alice""#,
        meaning: "Required: whose inbox file gets the line.",
    },
    Key {
        table: JUNK_LINE,
        key: "text",
        default: r#""this line is not JSON""#,
        values: "text",
        example: r#"text = "oops""#,
        meaning: "The line written; the reader skips it, whatever it says.",
    },
    // repeated_delivery and display_cap (Claude Code inboxes only)
    Key {
        table: RUNTIME,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "1s""#,
        meaning: "Required: from this time the fault acts on the agent's reads.",
    },
    Key {
        table: RUNTIME,
        key: "agent",
        default: NO_DEFAULT,
        values: "agent name",
        example: r#"agent = "alice""#,
        meaning: "Required: the agent whose inbox reads go wrong.",
    },
    Key {
        table: RUNTIME,
        key: "count",
        default: NO_DEFAULT,
        values: "whole number: 2 or more (repeated_delivery), 1 or more (display_cap)",
        example: "count = 2",
        meaning: "Required: repeated_delivery delivers each entry this many times; \
             display_cap shows at most this many a read.",
    },
    // phantom_send (Claude Code inboxes only)
    Key {
        table: PHANTOM_SEND,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "1s""#,
        meaning: "Required: when the message is sent.",
    },
    Key {
        table: PHANTOM_SEND,
        key: "from",
        default: NO_DEFAULT,
        values: "agent name",
        example: r#"from = "alice""#,
        meaning: "Required: the agent that sends it.",
    },
    Key {
        table: PHANTOM_SEND,
        key: "to",
        default: NO_DEFAULT,
        values: "a name not on the team",
        example: r#"to = "alcie""#,
        meaning: "Required: the mistyped name it is sent to.",
    },
    Key {
        table: PHANTOM_SEND,
        key: "text",
        default: r#""a message nobody will read""#,
        values: "text",
        example: r#"text = "done""#,
        meaning: "The text sent.",
    },
    // misrouted_id (Claude Code inboxes only)
    Key {
        table: MISROUTED_ID,
        key: "at",
        default: NO_DEFAULT,
        values: "duration",
        example: r#"at = "1s""#,
        meaning: "Required: when the teammate sends it.",
    },
    Key {
        table: MISROUTED_ID,
        key: "agent",
        default: NO_DEFAULT,
        values: "teammate name",
        example: r#"agent = "alice""#,
        meaning: "Required: the teammate that sends the lead a shutdown request of its own.",
    },
    // [[expect]]: each checks one thing.
    Key {
        table: EXPECT,
        key: "request",
        default: NO_DEFAULT,
        values: "a request label",
        example: r#"request = "stop-alice""#,
        meaning: "The request whose final `status` is checked; it fails if the request was never made.",
    },
    Key {
        table: EXPECT,
        key: "teammate",
        default: NO_DEFAULT,
        values: r#"teammate name, or a group like "worker-*""#,
        example: r#"teammate = "alice""#,
        meaning: "The teammate whose final `status` or `gate` is checked; a group checks every member.",
    },
    Key {
        table: EXPECT,
        key: "status",
        default: NO_DEFAULT,
        values: "request: approved, rejected, expired or pending; \
             teammate: working, waiting_approval, idle, shutdown, killed or crashed",
        example: r#"status = "expired""#,
        meaning: "The final state expected of the `request` or the `teammate`.",
    },
    Key {
        table: EXPECT,
        key: "file",
        default: NO_DEFAULT,
        values: "file path",
        example: r#"file = "src/auth.rs""#,
        meaning: "A file the work writes or edits, whose final `state` is checked.",
    },
    Key {
        table: EXPECT,
        key: "state",
        default: NO_DEFAULT,
        values: "complete, partial or absent",
        example: r#"state = "partial""#,
        meaning: "The file's expected final state; absent means no step of it was ever done.",
    },
    Key {
        table: EXPECT,
        key: "ignored",
        default: NO_DEFAULT,
        values: "whole number",
        example: "ignored = 1",
        meaning: "Exactly this many messages were ignored, by their requester or their receiver.",
    },
    Key {
        table: EXPECT,
        key: "reason",
        default: "any reason",
        values: "unknown_id, kind_mismatch, wrong_sender, wrong_recipient, not_pending, late, expired or \
             stale_incarnation",
        example: r#"reason = "late""#,
        meaning: "With `ignored`: count only the messages ignored for this reason.",
    },
    Key {
        table: EXPECT,
        key: "refused",
        default: NO_DEFAULT,
        values: "whole number",
        example: "refused = 1",
        meaning: "Exactly this many sends were refused by the send rules.",
    },
    Key {
        table: EXPECT,
        key: "rule",
        default: "any rule",
        values: "a send rule's name, like strict-hierarchy",
        example: r#"rule = "strict-hierarchy""#,
        meaning: "With `refused`: count only the sends refused by this rule.",
    },
    Key {
        table: EXPECT,
        key: "expired",
        default: NO_DEFAULT,
        values: "whole number",
        example: "expired = 1",
        meaning: "Exactly this many requests expired.",
    },
    Key {
        table: EXPECT,
        key: "violation",
        default: NO_DEFAULT,
        values: "an invariant's name, like matching-response",
        example: r#"violation = "matching-response""#,
        meaning: "The oracle must report this invariant broken: \
             it needs a defence off or, for no-silent-loss, inboxes lossy by design. \
             Run alone, the report shows it.",
    },
    Key {
        table: EXPECT,
        key: "gate",
        default: NO_DEFAULT,
        values: "not_required, required, pending, approved or rejected",
        example: r#"gate = "rejected""#,
        meaning: "With `teammate`: the state its plan gate must end in.",
    },
    Key {
        table: EXPECT,
        key: "deadlock",
        default: NO_DEFAULT,
        values: "a list of two or more teammate names",
        example: r#"deadlock = ["alice", "bob"]"#,
        meaning: "A deadlock among exactly these teammates, in any order, must form.",
    },
    Key {
        table: EXPECT,
        key: "broken",
        default: "either",
        values: "true or false",
        example: "broken = true",
        meaning: "With `deadlock`: true, it must be broken before the end; false, it must last to the end.",
    },
    Key {
        table: EXPECT,
        key: "received",
        default: NO_DEFAULT,
        values: "a message type",
        example: r#"received = "shutdown_request""#,
        meaning: "A message type that `by` must have received: delivered to it, not merely sent.",
    },
    Key {
        table: EXPECT,
        key: "by",
        default: NO_DEFAULT,
        values: "agent name",
        example: r#"by = "alice""#,
        meaning: "With `received`, and required there: the agent that received the messages.",
    },
    Key {
        table: EXPECT,
        key: "from",
        default: "any sender",
        values: "agent name",
        example: r#"from = "lead""#,
        meaning: "With `received`: count only messages from this agent.",
    },
    Key {
        table: EXPECT,
        key: "count",
        default: "at least one",
        values: "whole number",
        example: "count = 2",
        meaning: "With `received`: exactly this many such messages were received.",
    },
    Key {
        table: EXPECT,
        key: "inbox",
        default: NO_DEFAULT,
        values: "agent name",
        example: r#"inbox = "alice""#,
        meaning: "File or Claude Code inboxes: the agent whose inbox is counted at the end of the run.",
    },
    Key {
        table: EXPECT,
        key: "lines",
        default: NO_DEFAULT,
        values: "whole number",
        example: "lines = 2",
        meaning: "With `inbox`, and required there: exactly this many lines (file) or entries (Claude Code) are left.",
    },
    Key {
        table: EXPECT,
        key: "type",
        default: "any type",
        values: "a message type",
        example: r#"type = "shutdown_request""#,
        meaning: "With `inbox`: count only the lines or entries of this message type.",
    },
];

/// The reference page as Markdown: a heading per table, one Markdown table
/// per table with columns key | default | values | example | meaning.
pub fn markdown() -> String {
    let mut out = String::from(
        "# Scenario file keys\n\n\
         Every key a scenario file takes, table by table: its default, what it takes, an example and what it \
         does. This page is generated by `handshake scenarios --keys` from the table in \
         `src/format/reference.rs`, which a test holds to the scenario reader's own key lists: do not edit it by \
         hand, change that table and generate the page again. What each key does in depth, and how to write a \
         first scenario: [scenarios.md](scenarios.md).\n",
    );
    for table in TABLES {
        let heading = if table.starts_with('[') { code(table) } else { cell(table) };
        out.push_str(&format!("\n## {heading}\n\n"));
        out.push_str("| key | default | values | example | meaning |\n|---|---|---|---|---|\n");
        for key in KEYS.iter().filter(|key| key.table == *table) {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                code(key.key),
                cell(key.default),
                cell(key.values),
                code(key.example),
                cell(key.meaning)
            ));
        }
    }
    out
}

/// Text for a table cell: a `|` would end the cell, and outside code spans
/// `<`, `>` and `*` would be read as HTML or emphasis.
fn cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '|' => out.push_str("\\|"),
            '\n' => out.push(' '),
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            '*' if !in_code => out.push_str("\\*"),
            c => out.push(c),
        }
    }
    out
}

/// Text as a code span in a table cell, fenced with more backticks than it holds.
fn code(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{}{pad}{fence}", text.replace('|', "\\|").replace('\n', " "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::build::{step_actions, DEFAULT_PLAN_REQUEST, DEFAULT_SEED};
    use crate::format::duration::parse_duration;
    use crate::format::file::{
        policy_keys, EXPECT_KEYS, FAULT_KEYS, FAULT_KINDS, LEAD_KEYS, STEP_KEYS, TEAMMATE_KEYS, TOP_KEYS, WORK_KEYS,
    };
    use crate::protocol::{Defences, Kind};
    use crate::world::{FaultKind, FileMailbox, TeamMailbox};
    use std::collections::BTreeSet;

    fn keys_of(table: &str) -> Vec<&'static str> {
        KEYS.iter().filter(|k| k.table == table).map(|k| k.key).collect()
    }

    fn key(table: &str, name: &str) -> &'static Key {
        KEYS.iter().find(|k| k.table == table && k.key == name).unwrap_or_else(|| panic!("{table} {name}"))
    }

    /// Every key the reader takes is under `table` once, and nothing else is.
    fn holds_to(table: &str, reader: &[&str]) {
        let ours = keys_of(table);
        for r in reader {
            let n = ours.iter().filter(|k| *k == r).count();
            assert_eq!(n, 1, "{table}: `{r}`, which the reader takes, is here {n} times");
        }
        for o in &ours {
            assert!(reader.contains(o), "{table}: `{o}` is no key the reader takes");
        }
    }

    /// The fault kinds a table of fault keys covers, as its name quotes them.
    fn kinds_of(table: &str) -> Vec<FaultKind> {
        let Some(names) = table.strip_prefix("[[fault]] kind = ") else { return Vec::new() };
        names.split('"').skip(1).step_by(2).map(|n| FaultKind::named(n).unwrap_or_else(|| panic!("{n}"))).collect()
    }

    /// The quoted strings of a text, in order.
    fn quoted(text: &str) -> Vec<&str> {
        text.split('"').skip(1).step_by(2).collect()
    }

    #[test]
    fn every_key_the_reader_takes_is_declared_once_and_none_else() {
        holds_to(TOP, TOP_KEYS);
        holds_to(POLICY, &policy_keys());
        let switches: Vec<String> = Defences::default().switches().into_iter().map(|(name, _)| name).collect();
        assert!(!switches.is_empty());
        holds_to(DEFENCES, &switches.iter().map(String::as_str).collect::<Vec<_>>());
        holds_to(LEAD, LEAD_KEYS);
        holds_to(TEAMMATE, TEAMMATE_KEYS);
        holds_to(WORK, WORK_KEYS);
        holds_to(STEP, STEP_KEYS);
        holds_to(EXPECT, EXPECT_KEYS);
        holds_to(FAULT, &["kind"]);
    }

    #[test]
    fn every_fault_kind_has_its_keys_in_one_table() {
        let mut covered = Vec::new();
        let mut all: BTreeSet<&str> = BTreeSet::from(["kind"]);
        for table in TABLES.iter().filter(|t| t.starts_with("[[fault]] kind = ")) {
            let kinds = kinds_of(table);
            assert!(!kinds.is_empty(), "{table}");
            // The table's keys are its kinds' keys, each once.
            let mut union: Vec<&str> = kinds.iter().flat_map(|k| k.keys().iter().copied()).collect();
            union.sort();
            union.dedup();
            holds_to(table, &union);
            all.extend(union);
            covered.extend(kinds);
        }
        for kind in FaultKind::ALL {
            let n = covered.iter().filter(|k| *k == kind).count();
            assert_eq!(n, 1, "fault kind {kind} is in {n} tables");
        }
        // Together they are every key a fault takes.
        assert_eq!(all, FAULT_KEYS.iter().copied().collect::<BTreeSet<_>>());
        let kinds = key(FAULT, "kind").values;
        for name in FAULT_KINDS.iter() {
            assert!(kinds.contains(name), "`kind` does not list {name}");
        }
    }

    #[test]
    fn every_table_is_listed_once_and_every_key_is_in_one() {
        let tables: BTreeSet<&str> = TABLES.iter().copied().collect();
        assert_eq!(tables.len(), TABLES.len(), "a table listed twice");
        for table in TABLES {
            assert!(!keys_of(table).is_empty(), "{table} has no keys");
        }
        let mut seen = BTreeSet::new();
        for k in KEYS {
            assert!(tables.contains(k.table), "`{}` is under {}, which is not in TABLES", k.key, k.table);
            assert!(seen.insert((k.table, k.key)), "{} `{}` is declared twice", k.table, k.key);
        }
    }

    #[test]
    fn every_entry_is_filled_in_briefly_and_its_example_reads() {
        for k in KEYS {
            let what = format!("{} `{}`", k.table, k.key);
            assert!(!k.default.trim().is_empty(), "{what}: no default (write \"—\")");
            assert!(!k.values.trim().is_empty(), "{what}: no values");
            assert!(!k.meaning.trim().is_empty(), "{what}: no meaning");
            let words = k.meaning.split_whitespace().count();
            assert!(words <= 25, "{what}: the meaning has {words} words, more than 25");
            assert!(!k.example.trim().is_empty(), "{what}: no example");
            assert!(k.example.contains(k.key), "{what}: the example {:?} does not show the key", k.example);
            // Each example is TOML as a file writes it; a work item is an
            // inline table in a teammate's `work`.
            let doc = if k.example.starts_with('{') { format!("work = [{}]", k.example) } else { k.example.into() };
            let parsed: toml::Table = toml::from_str(&doc).unwrap_or_else(|e| panic!("{what}: {e}"));
            let has = match parsed.get("work") {
                Some(toml::Value::Array(items)) if k.table == WORK => items[0].get(k.key).is_some(),
                _ => parsed.contains_key(k.key) || (k.key == "defences" && parsed.contains_key("policy")),
            };
            assert!(has, "{what}: the example {:?} does not set the key", k.example);
        }
    }

    #[test]
    fn the_actions_and_defaults_are_the_codes() {
        let actions = key(STEP, "do").values;
        for a in step_actions() {
            assert!(actions.contains(a), "`do` does not list {a}");
        }
        for kind in Kind::ALL {
            let spec = kind.spec();
            let timeout = key(POLICY, spec.timeout_key).default;
            assert_eq!(
                quoted(timeout).iter().map(|t| parse_duration(t)).collect::<Vec<_>>(),
                [Ok(spec.default_timeout)]
            );
            let expiry = key(POLICY, spec.expiry_key);
            assert_eq!(expiry.default, format!("\"{}\"", spec.on_expiry[0].as_str()), "{}", spec.expiry_key);
            for d in spec.on_expiry {
                assert!(expiry.values.contains(d.as_str()), "{} does not list {}", spec.expiry_key, d.as_str());
            }
        }
        for (switch, on) in Defences::default().switches() {
            assert_eq!(key(DEFENCES, &switch).default, on.to_string(), "{switch}");
        }
        assert_eq!(key(TOP, "seed").default, DEFAULT_SEED.to_string());
        let polls: Vec<_> = quoted(key(POLICY, "inbox_poll").default).into_iter().map(parse_duration).collect();
        assert_eq!(polls, [Ok(FileMailbox::default().poll), Ok(TeamMailbox::default().poll)]);
        assert!(key(STEP, "text").default.contains(&format!("\"{DEFAULT_PLAN_REQUEST}\"")));
        let teammate = crate::agent::teammate::TeammateSpec::default();
        assert_eq!(key(TEAMMATE, "task_steps").default, teammate.task_steps.to_string());
        assert_eq!(key(TEAMMATE, "max_revisions").default, teammate.max_revisions.to_string());
    }

    #[test]
    fn the_page_has_one_well_formed_row_per_key() {
        let page = markdown();
        assert!(page.contains("generated by `handshake scenarios --keys`") && page.contains("do not edit"));
        let rows: Vec<&str> = page.lines().filter(|l| l.starts_with('|')).collect();
        // A header and a rule per table, then a row per key.
        assert_eq!(rows.len(), KEYS.len() + 2 * TABLES.len());
        for row in rows {
            let bars = row.match_indices('|').filter(|(i, _)| !row[..*i].ends_with('\\')).count();
            assert_eq!(bars, 6, "not five cells: {row}");
        }
        for table in TABLES {
            assert_eq!(
                page.matches(&format!("\n## {}\n", if table.starts_with('[') { code(table) } else { cell(table) }))
                    .count(),
                1
            );
        }
        assert_eq!(cell("a | b <c> *d*"), "a \\| b &lt;c&gt; \\*d\\*");
        assert_eq!(code("x = \"|\""), "`x = \"\\|\"`");
        assert_eq!(cell("`a|b` <c>"), "`a\\|b` &lt;c&gt;");
    }
}
