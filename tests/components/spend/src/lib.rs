//! A test component with one tool, `spend`, whose cost the test knows in
//! advance: it holds `mib` MiB of linear memory (every page touched) and
//! sends one GET whose body is `bytes` bytes to `url`. The cost the host
//! measures must be within those bounds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::{Annotations, Tool, ToolError, http};

/// How much to spend.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Budget {
    /// MiB of memory to allocate and touch.
    #[schemars(example = 8)]
    mib: u32,
    /// Where to send the request (a GET with a body).
    #[schemars(example = &"http://127.0.0.1:8080/spend")]
    url: String,
    /// Bytes in the request's body.
    #[schemars(example = 4096)]
    bytes: u32,
}

/// What was spent, as the component saw it.
#[derive(Serialize, JsonSchema)]
struct Spent {
    /// The upstream status.
    status: u16,
    /// A byte of the memory, so the allocation is not optimised away.
    touched: u8,
}

/// Allocates, touches, sends.
struct Spend;
impl Tool for Spend {
    type Input = Budget;
    type Output = Spent;
    const NAME: &'static str = "spend";
    const TITLE: &'static str = "Spend";
    const DESCRIPTION: &'static str = "Allocate the given MiB of memory and send a GET with a body of the given bytes. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    fn call(&self, input: Budget) -> Result<Spent, ToolError> {
        let mut memory = vec![0u8; input.mib as usize * (1 << 20)];
        for page in memory.chunks_mut(4096) {
            page[0] = 1;
        }
        let touched = memory
            .iter()
            .step_by(4096)
            .fold(0u8, |a, b| a.wrapping_add(*b));
        // A JSON string of `bytes - 2` characters is `bytes` bytes.
        let body = "x".repeat((input.bytes as usize).saturating_sub(2));
        let response = http::Request::get(input.url).json(&body)?.send()?;
        Ok(Spent {
            status: response.status,
            touched,
        })
    }
}

toolhost_sdk::export_tools!(Spend);
