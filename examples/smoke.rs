use handshake::agent::{Script, TeammateSpec, WorkItem};
use handshake::protocol::{Action, Millis};
use handshake::team::{run, Step, TeamSpec};

fn main() {
    let alice = TeammateSpec {
        work: vec![WorkItem {
            action: Action::Write,
            path: Some("src/auth.rs".into()),
            steps: 4,
            step_time: Millis(500),
        }],
        ..TeammateSpec::default()
    };
    let mut spec = TeamSpec::new(vec![("alice".into(), alice)]);
    spec.steps.push(Step {
        at: Millis(1000),
        agent: handshake::protocol::AgentId::LEAD,
        script: Script::Shutdown {
            to: handshake::protocol::AgentId(1),
            reason: None,
            label: Some("stop-alice".into()),
        },
    });
    let t = std::time::Instant::now();
    let out = run(spec);
    for e in &out.events {
        println!("{}", e.describe(&out.names));
    }
    println!(
        "{:?} ended {} roster {:?} files {:?} real {:?}",
        out.stop,
        out.ended_at,
        out.roster,
        out.files,
        t.elapsed()
    );
}
