//===- consumer-opt.cpp - a tool built on the installed ga-mlir -----------===//
//
// What a compiler that embeds ga-mlir does: register the upstream dialects it
// needs plus everything ga provides (ga/InitAllGA.h), then run MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "ga/InitAllGA.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::ga::registerAllGAPasses();
  mlir::ga::registerAllGAPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect>();
  mlir::ga::registerAllGADialects(registry);

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "ga-mlir consumer: upstream dialects + ga\n", registry));
}
