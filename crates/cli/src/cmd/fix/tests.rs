use super::check::write_nodes;
use fixcore::parse::{Node, Parser};
use serde_json::{Map, Value as Json};

/// The reference: the map `fix check --json` printed before it wrote
/// objects itself.
fn via_map(nodes: &[Node<'_>]) -> Json {
    let mut m = Map::new();
    for n in nodes {
        match n {
            Node::Field(f) => {
                let v = String::from_utf8_lossy(f.value).into_owned();
                m.insert(f.tag.to_string(), Json::String(v));
            }
            Node::Group(count, entries) => {
                let v = entries.iter().map(|e| via_map(e)).collect();
                m.insert(count.tag.to_string(), Json::Array(v));
            }
        }
    }
    Json::Object(m)
}

fn framed(body: &str) -> Vec<u8> {
    let b = body.replace('|', "\x01");
    let head = format!("8=FIX.4.4\x019={}\x01{}", b.len(), b);
    let sum: u32 = head.bytes().map(u32::from).sum();
    format!("{head}10={:03}\x01", sum % 256).into_bytes()
}

#[test]
fn write_nodes_matches_a_serde_json_map_byte_for_byte() {
    let mut parser = Parser::new();
    let mut order = Vec::new();
    for body in [
        "35=W|55=EUR/USD|268=2|269=0|270=1.1|269=1|270=1.2|",
        "35=D|49=A|56=B|34=7|1=acct|11=\"q\\x|100=é\t|9999=z|38=100|",
        "35=0|",
    ] {
        let m = framed(body);
        let msg = parser.parse(&m).unwrap();
        let nodes = msg.nodes();
        let mut ours = Vec::new();
        write_nodes(&mut ours, &nodes, &mut order).unwrap();
        let theirs = serde_json::to_vec(&via_map(&nodes)).unwrap();
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            String::from_utf8(theirs).unwrap()
        );
        assert!(order.is_empty());
    }
}
