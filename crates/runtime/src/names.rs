//! MCP's rule for names: what a tool's (or prompt's) name may hold. A leaf:
//! [`crate::spec`] checks a component's names with it, toolhost's `config` a
//! block's `prefix`, [`crate::plugin`] the served name they make together.

/// Whether `name` follows MCP's tool-name rules: 1 to 128 characters, ASCII
/// letters, digits, `_`, `.` and `-`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_mcp_rules() {
        assert!(is_valid_name("list_orders"));
        assert!(is_valid_name("task.create-v2"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("has space"));
        assert!(!is_valid_name("slash/name"));
        assert!(!is_valid_name(&"x".repeat(129)));
    }
}
