//! The models the explorer is measured on, shared by `tests/explore.rs`,
//! `benches/explore.rs` and `benches/anchor.rs` (the benches include this
//! file by path, each using one of the two).

/// The bundled scenario 29 with `n` teammates instead of three: a lead
/// shutting down `n` identical teammates, each rejecting the first request
/// and approving the second, asked 5 s later.
#[allow(dead_code)]
pub fn lossy_shutdown(n: usize) -> String {
    let mut s = format!(
        "name = \"lossy-shutdown-{n}\"\nabout = \"{n} teammates, each rejects once\"\n\
         [[teammate]]\nname = \"worker\"\ncount = {n}\non_shutdown = [\"reject\", \"approve\"]\n\
         reject_reason = \"still busy\"\n"
    );
    for at in ["1s", "6s"] {
        for i in 1..=n {
            s.push_str(&format!("[[step]]\nat = \"{at}\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n"));
        }
    }
    s
}

/// The bundled scenario 41 (the Stateright anchor's model) with `n`
/// teammates instead of three, each asked once at 1 s; shared by
/// `tests/explore.rs` and `benches/anchor.rs`.
#[allow(dead_code)]
pub fn lossy_re_ask(n: usize) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/41-lossy-re-ask.toml");
    let text = std::fs::read_to_string(path).expect("the bundled scenario 41");
    let head = text.split("[[step]]").next().expect("a head").replace("count = 3", &format!("count = {n}"));
    let steps: String =
        (1..=n).map(|i| format!("[[step]]\nat = \"1s\"\ndo = \"shutdown\"\nto = \"worker-{i}\"\n")).collect();
    format!("{head}{steps}")
}
