//! Where a file's plain scalars read otherwise to a YAML 1.1 reader than by the 1.2 core
//! schema mcpspec reads ([`super::schema::yaml11_reading`]): what `validate` warns about.

use super::schema::{CoreTag, yaml11_reading};
use super::tree::{Kind, Node};

/// A plain scalar of a file that a YAML 1.1 reader would read otherwise: where it is,
/// its text, and what 1.1 reads it as.
#[derive(Debug, Clone, PartialEq)]
pub struct Yaml11Note {
    pub line: u32,
    pub col: u32,
    pub text: String,
    pub yaml11: &'static str,
}

/// The plain, untagged scalars (keys and values) of `text` that a YAML 1.1 reader would
/// read otherwise, in the order of the file; each anchored node once. None for a file
/// that does not read.
pub fn yaml11_notes(text: &str) -> Vec<Yaml11Note> {
    fn walk(
        node: &Node,
        seen: &mut std::collections::HashSet<*const ()>,
        out: &mut Vec<Yaml11Note>,
    ) {
        match &node.kind {
            Kind::Scalar(s) if s.plain && s.tag == CoreTag::None => {
                if let Some(yaml11) = yaml11_reading(&s.text) {
                    out.push(Yaml11Note {
                        line: node.line,
                        col: node.col,
                        text: s.text.to_string(),
                        yaml11,
                    });
                }
            }
            Kind::Scalar(_) => {}
            Kind::Seq(items) => items.iter().for_each(|i| walk(i, seen, out)),
            Kind::Map(entries) => entries.iter().for_each(|(k, v)| {
                walk(k, seen, out);
                walk(v, seen, out);
            }),
            Kind::Shared(target) => {
                if seen.insert(std::rc::Rc::as_ptr(target).cast()) {
                    walk(target, seen, out);
                }
            }
        }
    }
    let Ok(node) = super::tree::read(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(&node, &mut std::collections::HashSet::new(), &mut out);
    out.sort_by_key(|n| (n.line, n.col));
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each value a YAML 1.1 reader reads otherwise, once, where it is: an anchored one
    /// once however many aliases repeat it; quoted and tagged values are meant as written.
    #[test]
    fn yaml11_notes_say_where_a_1_1_reader_differs() {
        let text = "a: yes\nb: &o [on, \"off\", !!str n]\nc: *o\nd: 0127\n1_000: true\n";
        let notes = yaml11_notes(text);
        let notes: Vec<(u32, u32, &str, &str)> = notes
            .iter()
            .map(|n| (n.line, n.col, n.text.as_str(), n.yaml11))
            .collect();
        assert_eq!(
            notes,
            [
                (1, 4, "yes", "the boolean true"),
                (2, 8, "on", "the boolean true"),
                (4, 4, "0127", "an octal integer"),
                (5, 1, "1_000", "a number (`_` between digits)"),
            ]
        );
    }
}
