fn main() {
    use handshake::agent::*;
    println!(
        "Agent {} Teammate {} Lead {} TeammateSpec {} Due? Input {} RequestTable {}",
        std::mem::size_of::<Agent>(),
        std::mem::size_of::<Teammate>(),
        std::mem::size_of::<Lead>(),
        std::mem::size_of::<TeammateSpec>(),
        std::mem::size_of::<Input>(),
        std::mem::size_of::<handshake::protocol::RequestTable>(),
    );
}
