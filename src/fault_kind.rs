//! Every kind of fault a scenario can schedule, as one enum: its name as a
//! scenario file writes it, the keys it takes, and what it acts on. The
//! scenario reader, fuzz, shrink, replay, the history and the log read
//! names and keys from here, so a new kind is one variant, and the compiler
//! points at each `match` that must learn it. What each does is the world's
//! (`world/faults.rs`, `world/network.rs`); this module imports nothing, so
//! the log, below the world, can name kinds too.

/// A kind of fault. Its name (`torn_write`) and the list of every kind are
/// derived from the variants (strum), so a new kind is named and listed by
/// being written.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::VariantArray,
)]
#[strum(serialize_all = "snake_case")]
pub enum FaultKind {
    /// Messages on a link arrive later.
    Delay,
    /// Messages on a link are lost.
    Drop,
    /// Messages on a link arrive twice.
    Duplicate,
    /// A message on a link is overtaken by the next.
    Reorder,
    /// Two agents cannot reach each other for a while.
    Partition,
    /// A teammate stops, for good or until a restart.
    Crash,
    /// A teammate freezes: its inbox and timers wait.
    Stall,
    /// A message claiming to be from someone it is not.
    Forge,
    /// The network sends a message it saw once more.
    Replay,
    /// An append to an inbox file is cut short (file inboxes only).
    TornWrite,
    /// A line that is not a message lands in an inbox file (file inboxes only).
    JunkLine,
    /// The runtime fails to mark an inbox read, so the same entries are
    /// delivered again (Claude Code inboxes only).
    RepeatedDelivery,
    /// The runtime shows an agent at most so many entries a read (Claude
    /// Code inboxes only).
    DisplayCap,
    /// A message to a name that is not on the team (a typo), which the
    /// runtime writes to that name's inbox and reports sent (Claude Code
    /// inboxes only).
    PhantomSend,
    /// A teammate asks the lead for its own shutdown, which Claude Code lets
    /// it do, with a request id that names the lead (Claude Code inboxes only).
    MisroutedId,
}

impl FaultKind {
    /// Every kind, in the order the docs list them (the variants' order).
    pub const ALL: &'static [FaultKind] = <FaultKind as strum::VariantArray>::VARIANTS;

    /// Its name, as a scenario file writes it (`kind = "torn_write"`).
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// The kind a file names, if it is one.
    pub fn named(name: &str) -> Option<FaultKind> {
        name.parse().ok()
    }

    /// The keys a fault of this kind takes, `kind` aside.
    pub fn keys(self) -> &'static [&'static str] {
        const LINK: &[&str] = &["at", "until", "from", "to", "type", "request", "count", "probability"];
        match self {
            FaultKind::Delay => &["at", "until", "from", "to", "type", "request", "count", "probability", "delay"],
            FaultKind::Drop | FaultKind::Duplicate | FaultKind::Reorder => LINK,
            FaultKind::Partition => &["at", "until", "between", "direction", "mode"],
            FaultKind::Crash | FaultKind::TornWrite => &["at", "agent", "restart"],
            FaultKind::JunkLine => &["at", "agent", "text"],
            FaultKind::RepeatedDelivery | FaultKind::DisplayCap => &["at", "agent", "count"],
            FaultKind::PhantomSend => &["at", "from", "to", "text"],
            FaultKind::MisroutedId => &["at", "agent"],
            FaultKind::Stall => &["at", "until", "agent"],
            FaultKind::Forge => &["at", "from", "to", "message"],
            FaultKind::Replay => &["at", "request", "type"],
        }
    }

    /// Whether a file may leave out `at`: a fault on links, or a
    /// partition, then acts from the start. The others happen at a time.
    pub fn at_is_optional(self) -> bool {
        matches!(
            self,
            FaultKind::Delay | FaultKind::Drop | FaultKind::Duplicate | FaultKind::Reorder | FaultKind::Partition
        )
    }

    /// Whether it acts on inbox files, so only a team with file inboxes
    /// (`mailbox = "file"`) can have it.
    pub fn needs_inbox_files(self) -> bool {
        matches!(self, FaultKind::TornWrite | FaultKind::JunkLine)
    }

    /// Whether it acts on Claude Code's inbox arrays, so only a team with
    /// `mailbox = "claude-code"` can have it.
    pub fn needs_claude_code(self) -> bool {
        matches!(
            self,
            FaultKind::RepeatedDelivery | FaultKind::DisplayCap | FaultKind::PhantomSend | FaultKind::MisroutedId
        )
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_once_and_read_back_by_its_name() {
        for (i, k) in FaultKind::ALL.iter().enumerate() {
            assert_eq!(FaultKind::named(k.name()), Some(*k));
            assert!(!FaultKind::ALL[..i].contains(k), "{k:?} listed twice");
            assert!(k.keys().contains(&"at"), "{k:?} is scheduled at a time");
        }
        assert_eq!(FaultKind::named("torn-write"), None, "one spelling: the file's");
        // The derived names are the ones scenario files have always written.
        let names: Vec<&str> = FaultKind::ALL.iter().map(|k| k.name()).collect();
        let written = [
            "delay",
            "drop",
            "duplicate",
            "reorder",
            "partition",
            "crash",
            "stall",
            "forge",
            "replay",
            "torn_write",
            "junk_line",
            "repeated_delivery",
            "display_cap",
            "phantom_send",
            "misrouted_id",
        ];
        assert_eq!(names, written);
    }
}
