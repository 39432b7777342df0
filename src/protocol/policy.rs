//! The timeout policy and the switchable defences.

use super::kinds::{Kind, TimeoutDefault};
use super::time::Millis;
use serde::{Deserialize, Serialize};

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

impl Defences {
    /// Each switch by its name in a file, and whether it is on (serde's
    /// names: a defence added to the struct is here at once).
    pub fn switches(&self) -> Vec<(String, bool)> {
        let table = toml::Table::try_from(self).unwrap_or_default();
        table.into_iter().filter_map(|(k, v)| v.as_bool().map(|b| (k, b))).collect()
    }

    /// These defences with the switch named `name` set to `on`; `None` if
    /// no switch has that name.
    pub fn with_switch(&self, name: &str, on: bool) -> Option<Defences> {
        let mut table = toml::Table::try_from(self).ok()?;
        table.get(name)?;
        table.insert(name.to_string(), toml::Value::Boolean(on));
        table.try_into().ok()
    }
}

/// The protocol's rules for one run (a history's header carries them:
/// missing keys take their defaults). Each protocol's timeout and default
/// on expiry are kept by kind, under the keys its spec names
/// (`shutdown_timeout`, `on_plan_timeout`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// How long a request of each kind waits for its answer, by [`Kind::index`].
    pub timeouts: [Millis; Kind::COUNT],
    /// What an expired request of each kind does, one of its spec's `on_expiry`.
    pub on_expiry: [TimeoutDefault; Kind::COUNT],
    /// Teammates never send blocking requests to each other.
    pub strict_hierarchy: bool,
    pub defences: Defences,
    /// A deadlock fails the run (a protocol designer demanding its absence).
    pub fail_on_deadlock: bool,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeouts: Kind::ALL.map(|k| k.spec().default_timeout),
            on_expiry: Kind::ALL.map(|k| k.spec().on_expiry[0]),
            strict_hierarchy: true,
            defences: Defences::default(),
            fail_on_deadlock: false,
        }
    }
}

impl Policy {
    #[inline(always)]
    pub fn timeout(&self, kind: Kind) -> Millis {
        self.timeouts[kind.index()]
    }

    /// The default an expired request of this kind applies.
    #[inline(always)]
    pub fn on_expiry(&self, kind: Kind) -> TimeoutDefault {
        self.on_expiry[kind.index()]
    }

    /// The same policy with `kind`'s default on expiry set to `d`, if its
    /// spec allows it.
    pub fn expiring(mut self, kind: Kind, d: TimeoutDefault) -> Policy {
        assert!(kind.spec().on_expiry.contains(&d), "{kind} has no {} default", d.as_str());
        self.on_expiry[kind.index()] = d;
        self
    }
}

impl Serialize for Policy {
    /// Each protocol's timeout under its key, then each one's default on
    /// expiry, then the rest: the history header's fields.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2 * Kind::COUNT + 3))?;
        for k in Kind::ALL {
            m.serialize_entry(k.spec().timeout_key, &self.timeout(k))?;
        }
        for k in Kind::ALL {
            m.serialize_entry(k.spec().expiry_key, &self.on_expiry(k))?;
        }
        m.serialize_entry("strict_hierarchy", &self.strict_hierarchy)?;
        m.serialize_entry("defences", &self.defences)?;
        m.serialize_entry("fail_on_deadlock", &self.fail_on_deadlock)?;
        m.end()
    }
}

impl<'de> Deserialize<'de> for Policy {
    /// Missing keys take their defaults and unknown ones are passed over; a
    /// default on expiry its protocol does not have is refused.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Policy, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Policy;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a policy: each protocol's timeout and default on expiry, strict_hierarchy, defences")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Policy, A::Error> {
                let mut p = Policy::default();
                while let Some(key) = map.next_key::<String>()? {
                    if let Some(k) = Kind::ALL.into_iter().find(|k| k.spec().timeout_key == key) {
                        p.timeouts[k.index()] = map.next_value()?;
                    } else if let Some(k) = Kind::ALL.into_iter().find(|k| k.spec().expiry_key == key) {
                        let name: String = map.next_value()?;
                        let allowed = k.spec().on_expiry;
                        let Some(d) = allowed.iter().find(|d| d.name == name) else {
                            let words: Vec<&str> = allowed.iter().map(|d| d.as_str()).collect();
                            return Err(serde::de::Error::custom(format!(
                                "{key} = {name:?}: a {k} request's default is one of {}",
                                words.join(", ")
                            )));
                        };
                        p.on_expiry[k.index()] = *d;
                    } else {
                        match key.as_str() {
                            "strict_hierarchy" => p.strict_hierarchy = map.next_value()?,
                            "defences" => p.defences = map.next_value()?,
                            "fail_on_deadlock" => p.fail_on_deadlock = map.next_value()?,
                            _ => {
                                map.next_value::<serde::de::IgnoredAny>()?;
                            }
                        }
                    }
                }
                Ok(p)
            }
        }
        d.deserialize_map(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::kinds::{plan, shutdown};

    #[test]
    fn a_switch_is_set_by_its_name_in_a_file() {
        let d = Defences::default().with_switch("sender_auth", false).unwrap();
        assert!(!d.sender_auth && d.kind_check);
        assert!(d.switches().contains(&("sender_auth".to_string(), false)));
        assert_eq!(d.switches().len(), Defences::default().switches().len());
        assert_eq!(Defences::default().with_switch("sender_ath", false), None);
    }

    #[test]
    fn defaults_are_the_safe_ones() {
        let p = Policy::default();
        assert_eq!(p.on_expiry(Kind::Shutdown), shutdown::KILL);
        assert_eq!(p.on_expiry(Kind::Plan), plan::REJECT);
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
        let p = Policy::default().expiring(Kind::Shutdown, shutdown::KEEP).expiring(Kind::Plan, plan::APPROVE);
        assert_eq!(p.on_expiry(Kind::Shutdown), shutdown::KEEP);
        assert_eq!(p.on_expiry(Kind::Plan), plan::APPROVE);
    }
}
