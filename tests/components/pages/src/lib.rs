//! A `toolhost:plugin@0.2.0` test component with one resource template,
//! `test://{page}`, which matches `test://readme`, a resource of the
//! `offers` component. With both loaded, the tests show that what a caller
//! may not see shadows nothing: a caller who may see this component but
//! not `offers` reads `test://readme` through this template.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_sdk::{Annotations, Contents, ResourceTemplate, Tool, ToolError};

/// The variables of `test://{page}`.
#[derive(Deserialize)]
struct PageVariables {
    page: String,
}

/// `test://{page}`.
struct Page;

impl ResourceTemplate for Page {
    type Variables = PageVariables;
    const URI_TEMPLATE: &'static str = "test://{page}";
    const NAME: &'static str = "page";
    const TITLE: &'static str = "Page";
    const DESCRIPTION: &'static str = "Any page, by name: its text names the page.";
    const MIME_TYPE: &'static str = "text/plain";

    fn read(&self, uri: &str, variables: PageVariables) -> Result<Contents, ToolError> {
        Ok(Contents::Text(format!(
            "{uri} is the page {} of the pages component",
            variables.page
        )))
    }
}

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Nothing {}

/// What `page_count` returns.
#[derive(Serialize, JsonSchema)]
struct Count {
    /// How many templates the component offers.
    templates: usize,
}

/// `page_count`: a component serves at least one tool.
struct PageCount;

impl Tool for PageCount {
    type Input = Nothing;
    type Output = Count;
    const NAME: &'static str = "page_count";
    const TITLE: &'static str = "Count Page Templates";
    const DESCRIPTION: &'static str = "Count the resource templates this test component \
        offers. Use it to check that the component loaded.";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY_LOCAL;

    fn call(&self, _: Nothing) -> Result<Count, ToolError> {
        Ok(Count { templates: 1 })
    }
}

toolhost_sdk::export_component! {
    tools: [PageCount],
    templates: [Page],
}
