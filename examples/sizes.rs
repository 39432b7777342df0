fn main() {
    use handshake::agent::*;
    use handshake::protocol::*;
    println!(
        "Command {} Input {} Event {} Envelope {} Message {} Delivery {} Request {}",
        std::mem::size_of::<Command>(),
        std::mem::size_of::<Input>(),
        std::mem::size_of::<handshake::trace::Event>(),
        std::mem::size_of::<Envelope>(),
        std::mem::size_of::<Message>(),
        std::mem::size_of::<Delivery>(),
        std::mem::size_of::<Request>()
    );
}
