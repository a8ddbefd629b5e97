//! The StatusPro `list_statuses` tool as a toolhost component
//! (`statuspro_list_statuses.wasm`), with the status catalog and the usage
//! guide as resources (`statuspro://statuses`, `statuspro://guide`; see
//! [`statuspro_tools::resources`]). The tool itself is
//! [`statuspro_tools::ListStatuses`]; this crate only exports it, so an
//! operator can serve and grant each StatusPro tool separately.

toolhost_sdk::export_component! {
    tools: [statuspro_tools::ListStatuses],
    resources: [statuspro_tools::StatusCatalog, statuspro_tools::UsageGuide],
}
