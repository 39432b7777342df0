//! The strict work of one handshake alone, for callgrind: what point 1 of
//! the hot paths (a handshake within 450 instructions of bare actix) must
//! keep whatever the shells around it do. Per handshake: the lead's id drawn
//! from its ChaCha8 stream, the request checked against the send rules and
//! opened in a forgetful table (the bench's), the answer checked against the
//! send rules and matched and applied. No actor, no mailbox, no log.
//!
//! `valgrind --tool=callgrind target/perf/examples/floor N`: the count at
//! 2N minus the count at N, over N, is the floor a handshake stands on.
use handshake::agent::ids::IdStreams;
use handshake::agent::Roster;
use handshake::protocol::kinds::Kind;
use handshake::protocol::message::{Envelope, Message};
use handshake::protocol::policy::{Defences, Policy};
use handshake::protocol::rules::check_send;
use handshake::protocol::table::{NewRequest, RequestTable, Response};
use handshake::protocol::{Address, AgentId, Millis};
use handshake::trace::RosterStatus;
use std::hint::black_box;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let n: u64 = std::env::args().nth(1).map_or(20_000, |a| a.parse().expect("a count"));
    let policy = Policy::default();
    let roster = Roster { statuses: vec![RosterStatus::Working; 2] };
    let mut ids = IdStreams::new(1, 2);
    let mut table = RequestTable::forgetful(Defences::default(), 1);
    let (lead, mate) = (AgentId(0), AgentId(1));
    let mut applied = 0u64;
    for k in 0..n {
        let now = Millis(black_box(k));
        let id = ids.draw(black_box(lead));
        let timeout = policy.timeout(Kind::Shutdown);
        let ask = Envelope {
            from: lead,
            to: Address::Agent(mate),
            sent_at: now,
            message: Message::Request {
                kind: Kind::Shutdown,
                request_id: id,
                words: None,
                deadline: now.after(timeout),
            },
        };
        check_send(black_box(&ask), &roster, &policy).expect("a lawful request");
        table.open(
            id,
            NewRequest { kind: Kind::Shutdown, requester: lead, target: mate, sent_at: now, timeout, label: None },
        );
        let answer = Envelope {
            from: mate,
            to: Address::Agent(lead),
            sent_at: now,
            message: Message::Response { kind: Kind::Shutdown, request_id: id, approve: true, words: None },
        };
        check_send(black_box(&answer), &roster, &policy).expect("a lawful answer");
        let r = Response {
            request_id: id,
            kind: Kind::Shutdown,
            approve: true,
            sender: mate,
            claimed_from: mate,
            recipient: lead,
            at: now,
        };
        applied += u64::from(matches!(
            black_box(table.apply(black_box(&r))),
            handshake::protocol::table::Verdict::Applied { .. }
        ));
    }
    println!("{applied} of {n} applied");
}
