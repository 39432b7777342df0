//! Agent names and ids. Names are what people write; ids are what the hot path
//! compares. A name is checked once, where it enters the system.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The index of an agent in its team. The lead is always `AgentId::LEAD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentId(pub u32);

impl AgentId {
    pub const LEAD: AgentId = AgentId(0);

    pub fn is_lead(self) -> bool {
        self == AgentId::LEAD
    }

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The lead's name. Teammates may not take it.
pub const LEAD_NAME: &str = "lead";

/// Names that would be confusing or dangerous as a teammate's name: the lead's,
/// words that read as "everyone", and the adversary that forges messages.
pub const RESERVED_NAMES: &[&str] = &["lead", "all", "everyone", "broadcast", "system", "adversary"];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("a name cannot be empty")]
    Empty,
    #[error("name {0:?} is longer than 64 characters")]
    TooLong(String),
    #[error("name {name:?} contains {bad:?}: use only letters, digits, '_' and '-'")]
    BadCharacter { name: String, bad: char },
    #[error("name {0:?} is reserved")]
    Reserved(String),
}

/// Checks `[A-Za-z0-9_-]{1,64}`. Path separators, dots and spaces are refused
/// because agent names end up in file names and log lines in real systems.
pub fn check_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    if name.len() > 64 {
        return Err(NameError::TooLong(name.to_string()));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        return Err(NameError::BadCharacter { name: name.to_string(), bad });
    }
    Ok(())
}

/// A teammate's name must be valid and not reserved.
pub fn check_teammate_name(name: &str) -> Result<(), NameError> {
    check_name(name)?;
    if RESERVED_NAMES.iter().any(|r| r.eq_ignore_ascii_case(name)) {
        return Err(NameError::Reserved(name.to_string()));
    }
    Ok(())
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "agent#{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_names() {
        for ok in ["alice", "Bob_2", "a-b", "x", &"z".repeat(64)] {
            assert_eq!(check_teammate_name(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refuses_unsafe_names() {
        assert_eq!(check_name(""), Err(NameError::Empty));
        assert!(matches!(check_name(&"z".repeat(65)), Err(NameError::TooLong(_))));
        for bad in ["../etc", "a b", "a/b", "a.b", "émile", "a\nb", "*"] {
            assert!(matches!(check_name(bad), Err(NameError::BadCharacter { .. })), "{bad}");
        }
    }

    #[test]
    fn refuses_reserved_names_for_teammates() {
        for r in ["lead", "LEAD", "all", "broadcast", "adversary"] {
            assert!(matches!(check_teammate_name(r), Err(NameError::Reserved(_))), "{r}");
        }
        assert_eq!(check_name("lead"), Ok(()), "the lead itself is a valid name");
    }
}
