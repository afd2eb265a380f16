// Wraps one simulated API call in the ENTER/EXIT callbacks a CUPTI subscriber sees: functionName, functionParams
// pointing at the genuine *_params struct, symbolName for launches, functionReturnValue at EXIT, correlation data
// shared between the two sites. Used by the driver and the runtime alike.
#pragma once

#include <cupti_callbacks.h>

#include "private_table.h"

namespace simcuda {

struct TraceSite {
  CUpti_CallbackDomain domain;
  CUpti_CallbackId cbid;
  const char* function_name;
};

template <typename Result, typename Params, typename Body>
Result traced_call(const PrivateTable& table, const TraceSite& site, const Params& params, const char* symbol,
                   CUcontext context, Body&& body) {
  ToolDispatch dispatch = table.tool_dispatch();
  if (dispatch == nullptr) return body();

  uint64_t correlation_data = 0;
  Result result{};
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_ENTER;
  data.functionName = site.function_name;
  data.functionParams = &params;
  data.functionReturnValue = &result;
  data.symbolName = symbol;
  data.context = context;
  data.contextUid = context == nullptr ? 0u : table.context_uid != nullptr ? table.context_uid(context) : 1u;
  data.correlationData = &correlation_data;
  data.correlationId = table.next_correlation_id();
  dispatch(site.domain, site.cbid, &data);

  result = body();

  data.callbackSite = CUPTI_API_EXIT;
  // A subscriber attached during the call still gets EXIT, as with the real library.
  if (ToolDispatch now = table.tool_dispatch()) now(site.domain, site.cbid, &data);
  return result;
}

}  // namespace simcuda
