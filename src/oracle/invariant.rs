//! The always-on invariants, by the names reports and scenario files use.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// Each request ends in exactly one terminal state, or is still pending
    /// only because the run ended before its deadline.
    SingleTerminal,
    /// A terminal state never changes.
    TerminalFinal,
    /// Only a matching response changes state.
    MatchingResponse,
    /// No gated mutating action runs before its plan is approved.
    GatedAction,
    /// An expired request applies its policy default.
    ExpiryPolicy,
    /// A graceful shutdown leaves no partial write.
    GracefulComplete,
    /// A message disappears only through an injected fault, and the trace says so.
    NoSilentLoss,
    /// Killed, shut down, and crashed without a restart are final: such an
    /// agent never acts again, its state never changes, and a restart brings
    /// back only a crash that scheduled it.
    FinalRoster,
    /// An agent answers only the requests sent to its current incarnation:
    /// one sent before its crash was meant for a process that is gone, and
    /// its asker settles it by the deadline, not by an answer from the restart.
    CurrentIncarnation,
}

impl Invariant {
    pub const ALL: [Invariant; 9] = [
        Invariant::SingleTerminal,
        Invariant::TerminalFinal,
        Invariant::MatchingResponse,
        Invariant::GatedAction,
        Invariant::ExpiryPolicy,
        Invariant::GracefulComplete,
        Invariant::NoSilentLoss,
        Invariant::FinalRoster,
        Invariant::CurrentIncarnation,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Invariant::SingleTerminal => "single-terminal",
            Invariant::TerminalFinal => "terminal-final",
            Invariant::MatchingResponse => "matching-response",
            Invariant::GatedAction => "gated-action",
            Invariant::ExpiryPolicy => "expiry-policy",
            Invariant::GracefulComplete => "graceful-complete",
            Invariant::NoSilentLoss => "no-silent-loss",
            Invariant::FinalRoster => "final-roster",
            Invariant::CurrentIncarnation => "current-incarnation",
        }
    }

    pub fn parse(name: &str) -> Option<Invariant> {
        Invariant::ALL.into_iter().find(|i| i.name() == name)
    }
}

impl fmt::Display for Invariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
