//! The timeout policy and the switchable defences.

use super::message::Kind;
use super::time::Millis;
use serde::{Deserialize, Serialize};

/// What happens to a teammate whose shutdown request expires unanswered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnShutdownTimeout {
    /// Force-stop it: a silent worker is treated as lost (the safe default).
    #[default]
    Kill,
    /// Leave it running: the lead gives up asking.
    Keep,
}

/// What happens to a plan whose approval request expires unanswered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnPlanTimeout {
    /// The gate stays closed (the safe default).
    #[default]
    Reject,
    /// The gate opens as if approved: silence becomes consent. Dangerous.
    Approve,
}

/// The default a timeout applies, as recorded in the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutDefault {
    Kill,
    Keep,
    Reject,
    Approve,
}

impl TimeoutDefault {
    pub fn as_str(self) -> &'static str {
        match self {
            TimeoutDefault::Kill => "kill",
            TimeoutDefault::Keep => "keep",
            TimeoutDefault::Reject => "reject",
            TimeoutDefault::Approve => "approve",
        }
    }
}

/// Each check the protocol makes before applying a response. All on by
/// default; a scenario switches one off to show what it prevents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Defences {
    /// A response must be of its request's kind.
    pub kind_check: bool,
    /// A response must come from the request's target.
    pub sender_check: bool,
    /// "Comes from" means who the router saw send it, not the claimed `from`.
    pub sender_auth: bool,
    /// Only a pending request can change.
    pub pending_check: bool,
    /// A request that arrives at or after the deadline it carries is ignored:
    /// its asker has already applied the timeout default.
    pub deadline_check: bool,
    /// A request the router stamped for an earlier incarnation of its
    /// receiver (sent before a crash and restart) is ignored: the process it
    /// was meant for is gone, and its asker's deadline settles it.
    pub incarnation_check: bool,
}

impl Default for Defences {
    fn default() -> Self {
        Defences {
            kind_check: true,
            sender_check: true,
            sender_auth: true,
            pending_check: true,
            deadline_check: true,
            incarnation_check: true,
        }
    }
}

/// The protocol's rules for one run (a history's header carries them:
/// missing keys take their defaults).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Policy {
    pub shutdown_timeout: Millis,
    pub plan_timeout: Millis,
    pub on_shutdown_timeout: OnShutdownTimeout,
    pub on_plan_timeout: OnPlanTimeout,
    /// Teammates never send blocking requests to each other.
    pub strict_hierarchy: bool,
    pub defences: Defences,
    /// A deadlock fails the run (a protocol designer demanding its absence).
    pub fail_on_deadlock: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            shutdown_timeout: Millis::from_secs(60),
            plan_timeout: Millis::from_secs(120),
            on_shutdown_timeout: OnShutdownTimeout::Kill,
            on_plan_timeout: OnPlanTimeout::Reject,
            strict_hierarchy: true,
            defences: Defences::default(),
            fail_on_deadlock: false,
        }
    }
}

impl Policy {
    pub fn timeout(&self, kind: Kind) -> Millis {
        match kind {
            Kind::Shutdown => self.shutdown_timeout,
            Kind::Plan => self.plan_timeout,
        }
    }

    /// The default an expired request of this kind applies.
    pub fn on_expiry(&self, kind: Kind) -> TimeoutDefault {
        match (kind, self.on_shutdown_timeout, self.on_plan_timeout) {
            (Kind::Shutdown, OnShutdownTimeout::Kill, _) => TimeoutDefault::Kill,
            (Kind::Shutdown, OnShutdownTimeout::Keep, _) => TimeoutDefault::Keep,
            (Kind::Plan, _, OnPlanTimeout::Reject) => TimeoutDefault::Reject,
            (Kind::Plan, _, OnPlanTimeout::Approve) => TimeoutDefault::Approve,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_safe_ones() {
        let p = Policy::default();
        assert_eq!(p.on_expiry(Kind::Shutdown), TimeoutDefault::Kill);
        assert_eq!(p.on_expiry(Kind::Plan), TimeoutDefault::Reject);
        assert_eq!(p.timeout(Kind::Shutdown), Millis(60_000));
        assert_eq!(p.timeout(Kind::Plan), Millis(120_000));
        assert!(p.strict_hierarchy);
        assert_eq!(
            p.defences,
            Defences {
                kind_check: true,
                sender_check: true,
                sender_auth: true,
                pending_check: true,
                deadline_check: true,
                incarnation_check: true
            }
        );
    }

    #[test]
    fn alternatives_apply_when_chosen() {
        let p = Policy {
            on_shutdown_timeout: OnShutdownTimeout::Keep,
            on_plan_timeout: OnPlanTimeout::Approve,
            ..Policy::default()
        };
        assert_eq!(p.on_expiry(Kind::Shutdown), TimeoutDefault::Keep);
        assert_eq!(p.on_expiry(Kind::Plan), TimeoutDefault::Approve);
    }
}
