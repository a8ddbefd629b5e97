//! The StatusPro `get_viable_statuses` tool as a toolhost component
//! (`statuspro_get_viable_statuses.wasm`). The tool itself is
//! [`statuspro_tools::GetViableStatuses`]; this crate only exports it, so an operator can
//! serve and grant each StatusPro tool separately.

toolhost_sdk::export_tools!(statuspro_tools::GetViableStatuses);
