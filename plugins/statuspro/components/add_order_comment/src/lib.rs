//! The StatusPro `add_order_comment` tool as a toolhost component
//! (`statuspro_add_order_comment.wasm`). The tool itself is
//! [`statuspro_tools::AddOrderComment`]; this crate only exports it, so an operator can
//! serve and grant each StatusPro tool separately.

toolhost_sdk::export_tools!(statuspro_tools::AddOrderComment);
