//! Each invariant's standing on a history: broken (the oracle found it
//! broken), unknown (the files cannot show what it is about, and the reader
//! that read them says why), or held. A history read from files that cannot
//! decide an invariant never reports it held: what Porcupine, Elle and TLA+
//! trace validation give their users, a verdict per property with its reason.

use crate::oracle::{Invariant, Violation};

/// Where one invariant stands on a history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Standing {
    Held,
    /// Broken this many times.
    Broken(usize),
    /// The files cannot decide it, and why.
    Unknown(String),
}

impl Standing {
    pub fn word(&self) -> &'static str {
        match self {
            Standing::Held => "held",
            Standing::Broken(_) => "broken",
            Standing::Unknown(_) => "unknown",
        }
    }
}

/// How many of `standings` are unknown.
pub fn unknown(standings: &[(Invariant, Standing)]) -> usize {
    standings.iter().filter(|(_, s)| matches!(s, Standing::Unknown(_))).count()
}

/// Every invariant (the common ones, then each protocol's own) with its
/// standing: a violation decides it whatever the files cannot show.
pub fn standings(undecided: &[(Invariant, String)], violations: &[Violation]) -> Vec<(Invariant, Standing)> {
    Invariant::all()
        .into_iter()
        .map(|i| {
            let broken = violations.iter().filter(|v| v.invariant == i).count();
            let standing = match (broken, undecided.iter().find(|(u, _)| *u == i)) {
                (0, Some((_, why))) => Standing::Unknown(why.clone()),
                (0, None) => Standing::Held,
                (n, _) => Standing::Broken(n),
            };
            (i, standing)
        })
        .collect()
}

/// "9 held, 1 broken, 3 unknown": the standings counted, for a verdict line.
pub fn counted(list: &[(Invariant, Standing)]) -> String {
    let count = |w: &str| list.iter().filter(|(_, s)| s.word() == w).count();
    let mut parts = vec![format!("{} held", count("held"))];
    for w in ["broken", "unknown"] {
        if count(w) > 0 {
            parts.push(format!("{} {w}", count(w)));
        }
    }
    parts.join(", ")
}

/// What inbox files and transcripts cannot show, whoever wrote them: the
/// work a plan gates, the writes a shutdown may cut, deadlines.
pub fn not_in_messages() -> Vec<(Invariant, String)> {
    vec![
        (Invariant::GatedAction, "the files record messages, not the work a plan approval gates".to_string()),
        (Invariant::GracefulComplete, "the files record messages, not the writes a shutdown may cut short".to_string()),
        (Invariant::ExpiryPolicy, "the files record no deadlines: nothing in them expires".to_string()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Millis;

    #[test]
    fn a_violation_decides_an_invariant_the_files_cannot_show_and_the_rest_hold() {
        let undecided = vec![
            (Invariant::NoSilentLoss, "lost entries leave no trace".to_string()),
            (Invariant::GatedAction, "no work recorded".to_string()),
        ];
        let broken = Violation { invariant: Invariant::NoSilentLoss, at: Millis(1), event: None, detail: "x".into() };
        let list = standings(&undecided, &[broken.clone(), broken]);
        let of = |i: Invariant| list.iter().find(|(x, _)| *x == i).unwrap().1.clone();
        assert_eq!(of(Invariant::NoSilentLoss), Standing::Broken(2));
        assert_eq!(of(Invariant::GatedAction), Standing::Unknown("no work recorded".into()));
        assert_eq!(of(Invariant::TerminalFinal), Standing::Held);
        assert_eq!(list.len(), Invariant::all().len());
        let held = Invariant::all().len() - 2;
        assert_eq!(counted(&list), format!("{held} held, 1 broken, 1 unknown"));
    }
}
