//===- GAEnums.td - enums of the ga dialect ----------------*- tablegen -*-===//

#ifndef GA_IR_GAENUMS_TD
#define GA_IR_GAENUMS_TD

include "mlir/IR/EnumAttr.td"
include "ga/IR/GADialect.td"

def GA_CollectiveKind : I32EnumAttr<"CollectiveKind",
    "reduction applied across the data-parallel group", [
  I32EnumAttrCase<"Sum", 0, "sum">,
  I32EnumAttrCase<"Mean", 1, "mean">,
  I32EnumAttrCase<"Max", 2, "max">,
  I32EnumAttrCase<"Min", 3, "min">
]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::ga";
}

def GA_CollectiveKindAttr : EnumAttr<GA_Dialect, GA_CollectiveKind, "collective"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // GA_IR_GAENUMS_TD
