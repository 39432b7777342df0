//! The protocol core: messages, send rules, the request table and its state
//! machine, deadlines, the timeout policy and the plan gate.
//!
//! Pure by design: no actix, no clock, no I/O. Inputs in, verdicts out, so the
//! same logic serves the actor runtime, the scenario runner and tests.

pub mod canon;
pub mod deadlines;
pub mod gate;
pub mod kinds;
pub mod message;
pub mod names;
pub mod policy;
pub mod request_id;
pub mod rules;
pub mod table;
pub mod time;
pub mod waitfor;

pub use canon::{Canon, Fingerprint};
pub use gate::{Action, GateChange, GateError, GateState, PlanGate};
pub use kinds::{Effect, TimeoutDefault};
pub use kinds::{Kind, OwnInvariant, Spec, YesMeans};
pub use message::{Address, Delivery, Envelope, Message, MessageType, RequestId, Role, Text};
pub use names::{check_name, check_teammate_name, AgentId, NameError, LEAD_NAME};
pub use policy::{Defences, Policy};
pub use rules::{check_send, Directory, SendError};
pub use table::{Expiry, Label, NewRequest, Reason, Request, RequestTable, Response, Status, Verdict};
pub use time::Millis;
pub use waitfor::{Cycle, WaitFor};
