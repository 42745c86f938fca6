use super::check::write_nodes;
use fixcore::parse::{Node, Parser};
use serde_json::Value as Json;

/// The reference: each object built as text from the nodes in order, its
/// values escaped by serde_json.
fn in_order(nodes: &[Node<'_>]) -> String {
    let members: Vec<String> = nodes
        .iter()
        .map(|n| match n {
            Node::Field(f) => {
                let v = Json::String(String::from_utf8_lossy(f.value).into_owned());
                format!("\"{}\":{v}", f.tag)
            }
            Node::Group(count, entries) => {
                let v: Vec<String> = entries.iter().map(|e| in_order(e)).collect();
                format!("\"{}\":[{}]", count.tag, v.join(","))
            }
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

fn framed(body: &str) -> Vec<u8> {
    let b = body.replace('|', "\x01");
    let head = format!("8=FIX.4.4\x019={}\x01{}", b.len(), b);
    let sum: u32 = head.bytes().map(u32::from).sum();
    format!("{head}10={:03}\x01", sum % 256).into_bytes()
}

#[test]
fn write_nodes_keeps_the_message_order() {
    let mut parser = Parser::new();
    for body in [
        "35=W|55=EUR/USD|268=2|269=0|270=1.1|269=1|270=1.2|",
        "35=D|49=A|56=B|34=7|1=acct|11=\"q\\x|100=é\t|9999=z|38=100|",
        "35=0|",
    ] {
        let m = framed(body);
        let msg = parser.parse(&m).unwrap();
        let nodes = msg.nodes();
        let mut ours = Vec::new();
        write_nodes(&mut ours, &nodes).unwrap();
        let ours = String::from_utf8(ours).unwrap();
        assert_eq!(ours, in_order(&nodes));
        // It is JSON, and its keys are the message's tags as sent.
        serde_json::from_str::<Json>(&ours).unwrap();
        let first: Vec<&str> = ours.split("\":").take(4).collect();
        assert!(
            first[0].ends_with("\"8") && first[1].ends_with("\"9"),
            "{ours}"
        );
        assert!(first[2].ends_with("\"35"), "{ours}");
    }
}
