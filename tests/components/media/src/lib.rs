//! Test component for contract 0.3 (`toolhost:plugin@0.3.0`): results with
//! content blocks, a prompt with an image, and forms of the tool's own.
//! Some tools break the rules on purpose, so the tests can show the host
//! refusing them.
//!
//! | tool | what it does |
//! |---|---|
//! | `show_pixel` | a 1×1 PNG beside its JSON |
//! | `mislabelled_image` | an image block whose MIME type is `text/plain` |
//! | `large_image` | an image of `bytes` bytes |
//! | `purchase_order` | an embedded Markdown document and a link |
//! | `pick_color` | asks a form (a titled choice and a note) and reports the answer |
//! | `pick_keyed_color` | asks the same form under its own input key, `fence_color` |
//! | `ask_password` | asks a form with a password field |
//! | `pick_then_post` | asks a form, then POSTs without confirming |
//! | `confirm_pick_post` | confirms, then asks a form, then POSTs |

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::confirm::require_confirmation;
use toolhost_sdk::form::ask_schema;
use toolhost_sdk::{
    Annotations, Block, Field, Form, FormAnswer, Message, Prompt, Tool, ToolError, http,
};

/// A 1×1 PNG.
const PIXEL: [u8; 67] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// A sentence.
#[derive(Serialize, JsonSchema)]
struct Note {
    /// The sentence.
    note: String,
}

fn note(text: &str) -> Note {
    Note { note: text.into() }
}

/// `show_pixel`.
struct ShowPixel;
impl Tool for ShowPixel {
    type Input = Nothing;
    type Output = Note;
    const NAME: &'static str = "show_pixel";
    const TITLE: &'static str = "Show a Pixel";
    const DESCRIPTION: &'static str = "Return a 1x1 PNG beside a sentence. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
    fn call(&self, _: Nothing) -> Result<Note, ToolError> {
        Ok(note("one red pixel"))
    }
    fn content(&self, _: &Note) -> Vec<Block> {
        vec![Block::image("image/png", PIXEL)]
    }
}

/// `mislabelled_image`.
struct MislabelledImage;
impl Tool for MislabelledImage {
    type Input = Nothing;
    type Output = Note;
    const NAME: &'static str = "mislabelled_image";
    const TITLE: &'static str = "Mislabelled Image";
    const DESCRIPTION: &'static str = "Return an image block typed text/plain. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
    fn call(&self, _: Nothing) -> Result<Note, ToolError> {
        Ok(note("mislabelled"))
    }
    fn content(&self, _: &Note) -> Vec<Block> {
        vec![Block::text("before"), Block::image("text/plain", PIXEL)]
    }
}

/// How large an image to return.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Size {
    /// Bytes of image data.
    #[schemars(example = 1000)]
    bytes: u32,
}

/// What `large_image` returns.
#[derive(Serialize, JsonSchema)]
struct Sized {
    /// Bytes of image data returned.
    bytes: u32,
}

/// `large_image`.
struct LargeImage;
impl Tool for LargeImage {
    type Input = Size;
    type Output = Sized;
    const NAME: &'static str = "large_image";
    const TITLE: &'static str = "Large Image";
    const DESCRIPTION: &'static str = "Return an image of the size asked. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
    fn call(&self, input: Size) -> Result<Sized, ToolError> {
        Ok(Sized { bytes: input.bytes })
    }
    fn content(&self, output: &Sized) -> Vec<Block> {
        vec![Block::image("image/png", vec![7u8; output.bytes as usize])]
    }
}

/// `purchase_order`.
struct PurchaseOrder;
impl Tool for PurchaseOrder {
    type Input = Nothing;
    type Output = Note;
    const NAME: &'static str = "purchase_order";
    const TITLE: &'static str = "Purchase Order";
    const DESCRIPTION: &'static str = "Return a document and a link. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
    fn call(&self, _: Nothing) -> Result<Note, ToolError> {
        Ok(note("PO-1"))
    }
    fn content(&self, _: &Note) -> Vec<Block> {
        vec![
            Block::document(
                "test://po/1",
                "text/markdown",
                "# PO-1\n\n| item | qty |\n|---|---|\n| knife | 2 |\n",
            ),
            Block::link("test://po/1", "po-1"),
        ]
    }
}

/// What a form tool reports.
#[derive(Serialize, JsonSchema)]
struct Picked {
    /// `accepted`, `declined`, `cancelled` or `unsupported`.
    answer: String,
    /// The color chosen, when accepted.
    color: Option<String>,
    /// The note given, when accepted.
    note: Option<String>,
    /// What a POST that followed got, if one was tried.
    posted: Option<String>,
}

/// The answer to the color form.
#[derive(Deserialize)]
struct ColorAnswer {
    color: String,
    note: Option<String>,
}

fn color_form() -> Form {
    Form::new()
        .required(
            "color",
            Field::choice(
                "Color",
                &[("red", "Red"), ("green", "Green"), ("blue", "Blue")],
            )
            .description("The color to paint the fence.")
            .default("green"),
        )
        .optional("note", Field::text("Note").bound("maxLength", 20))
}

fn pick() -> Result<Picked, ToolError> {
    pick_with(color_form())
}

fn pick_with(form: Form) -> Result<Picked, ToolError> {
    let answer = form.ask::<ColorAnswer>("Which color should the fence be?")?;
    Ok(match answer {
        FormAnswer::Accepted(a) => Picked {
            answer: "accepted".into(),
            color: Some(a.color),
            note: a.note,
            posted: None,
        },
        other => Picked {
            answer: other.as_str().into(),
            color: None,
            note: None,
            posted: None,
        },
    })
}

/// `pick_color`.
struct PickColor;
impl Tool for PickColor {
    type Input = Nothing;
    type Output = Picked;
    const NAME: &'static str = "pick_color";
    const TITLE: &'static str = "Pick a Color";
    const DESCRIPTION: &'static str = "Ask the user which color, and report the answer. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
    fn call(&self, _: Nothing) -> Result<Picked, ToolError> {
        pick()
    }
}

/// `pick_keyed_color`.
struct PickKeyedColor;
impl Tool for PickKeyedColor {
    type Input = Nothing;
    type Output = Picked;
    const NAME: &'static str = "pick_keyed_color";
    const TITLE: &'static str = "Pick a Color, Keyed";
    const DESCRIPTION: &'static str = "Ask the user which color under the input key fence_color, and report the answer. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
    fn call(&self, _: Nothing) -> Result<Picked, ToolError> {
        pick_with(color_form().key("fence_color"))
    }
}

/// `ask_password`.
struct AskPassword;
impl Tool for AskPassword {
    type Input = Nothing;
    type Output = Note;
    const NAME: &'static str = "ask_password";
    const TITLE: &'static str = "Ask a Password";
    const DESCRIPTION: &'static str = "Ask the user for a password in a form. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;
    fn call(&self, _: Nothing) -> Result<Note, ToolError> {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"user_password": {"type": "string", "title": "Password"}}
        });
        let answer = ask_schema::<serde_json::Value>("Sign in again, please.", &schema)?;
        Ok(note(answer.as_str()))
    }
}

/// A URL to POST to.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Target {
    /// The URL.
    #[schemars(example = &"http://127.0.0.1:8080/hook")]
    url: String,
}

fn post(url: String) -> String {
    match http::Request::post(url).json(&"x").and_then(|r| r.send()) {
        Ok(r) => format!("status {}", r.status),
        Err(e) => format!("refused: {}", e.message),
    }
}

/// `pick_then_post`.
struct PickThenPost;
impl Tool for PickThenPost {
    type Input = Target;
    type Output = Picked;
    const NAME: &'static str = "pick_then_post";
    const TITLE: &'static str = "Pick, Then Post";
    const DESCRIPTION: &'static str = "Ask a form, then POST without confirming. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::mutating(false, false);
    fn call(&self, input: Target) -> Result<Picked, ToolError> {
        let mut picked = pick()?;
        picked.posted = Some(post(input.url));
        Ok(picked)
    }
}

/// `confirm_pick_post`.
struct ConfirmPickPost;
impl Tool for ConfirmPickPost {
    type Input = Target;
    type Output = Picked;
    const NAME: &'static str = "confirm_pick_post";
    const TITLE: &'static str = "Confirm, Pick, Post";
    const DESCRIPTION: &'static str = "Ask for confirmation, then a form, then POST. Test tool.";
    const ANNOTATIONS: Annotations = Annotations::mutating(false, false);
    fn call(&self, input: Target) -> Result<Picked, ToolError> {
        let confirmed = require_confirmation(&format!("Post to {}?", input.url));
        let mut picked = pick()?;
        picked.posted = Some(if confirmed.is_confirmed() {
            post(input.url)
        } else {
            format!("not confirmed: {}", confirmed.as_str())
        });
        Ok(picked)
    }
}

/// No prompt arguments.
#[derive(Deserialize, JsonSchema)]
struct NoArguments {}

/// `describe_pixel`: a prompt with an image.
struct DescribePixel;
impl Prompt for DescribePixel {
    type Arguments = NoArguments;
    const NAME: &'static str = "describe_pixel";
    const TITLE: &'static str = "Describe a Pixel";
    const DESCRIPTION: &'static str = "An image, then a question about it.";
    fn get(&self, _: NoArguments) -> Result<Vec<Message>, ToolError> {
        Ok(vec![
            Message::user_image("image/png", PIXEL),
            Message::user("What color is this pixel?"),
        ])
    }
}

toolhost_sdk::export_component! {
    tools: [
        ShowPixel,
        MislabelledImage,
        LargeImage,
        PurchaseOrder,
        PickColor,
        PickKeyedColor,
        AskPassword,
        PickThenPost,
        ConfirmPickPost,
    ],
    prompts: [DescribePixel],
}
