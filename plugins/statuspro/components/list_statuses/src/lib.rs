//! The StatusPro `list_statuses` tool as a toolhost component
//! (`statuspro_list_statuses.wasm`). The tool itself is
//! [`statuspro_tools::ListStatuses`]; this crate only exports it, so an operator can
//! serve and grant each StatusPro tool separately.

toolhost_sdk::export_tools!(statuspro_tools::ListStatuses);
