"""MindSpore GRAPH_MODE rules (MS1xx), following ../shared/reference/graphmode/RULES.md.

Every rule here (except MS126, which looks at `__init__`) is a `GraphRule`: the engine calls
it only for nodes inside graph scopes resolved by `npu_lsp.scope`. Error severity is reserved
for what MindSpore 2.10 rejects at the scope's syntax level; patterns that compile but
behave differently from Python are warnings.
"""

from npu_lsp.rules.graphmode import (  # noqa: F401  (imported to register the rules)
    async_in_graph,
    branch_only_binding,
    branch_type_mismatch,
    cells_in_python_list,
    class_definition_in_graph,
    classmethod_in_graph,
    compile_time_frozen_call,
    complex_literal,
    del_statement,
    dict_output_strict,
    dict_unpack_merge,
    function_in_output,
    global_statement_in_graph,
    graph_builtin_semantics,
    import_in_graph,
    jit_forbidden_api,
    lambda_source_line,
    list_setitem_tensor_index,
    loop_else,
    match_statement,
    missing_return_on_tensor_branch,
    nested_comprehension,
    nonlocal_statement,
    numpy_returned_from_graph,
    opaque_value_query,
    parameter_created_in_graph,
    positional_only_construct,
    python_call_on_tensor,
    range_of_tensor,
    self_attribute_assignment,
    self_list_mutation,
    self_referencing_input,
    set_literal,
    tensor_attribute_assignment,
    tensor_dict_key,
    tensor_to_host,
    try_statement,
    unbounded_method_recursion,
    unsupported_exception_type,
    unsupported_python_call,
    values,
    walrus_operator,
    with_non_jit_class,
    yield_in_graph,
)
