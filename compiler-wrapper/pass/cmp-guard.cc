// lafuzz: comparison hooks called only while a tracing run is on.
//
// SanitizerCoverage's trace-cmp calls a hook before every integer comparison and switch; outside
// tracing runs the hook returns at once, but the call itself (and the registers it clobbers in
// hot loops) halved the speed of comparison-heavy targets. This pass, run after
// SanitizerCoverage, puts each hook call behind an inline test of the runtime's tracing flag
// (`libafl_cmplog_enabled`, one byte, set only during a tracing run), in a cold block: the
// common path pays a load and a branch that is never taken.
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

using namespace llvm;

namespace {

// The byte both runtimes (in-process: libafl_targets; standalone: runtime/cmplog.c) set to 1
// for the duration of a tracing run.
constexpr const char *TRACING_FLAG = "libafl_cmplog_enabled";

bool isComparisonHook(const Function *callee) {
  if (!callee) return false;
  StringRef name = callee->getName();
  return name.starts_with("__sanitizer_cov_trace_cmp") ||
         name.starts_with("__sanitizer_cov_trace_const_cmp") ||
         name == "__sanitizer_cov_trace_switch";
}

struct GuardComparisonHooks : PassInfoMixin<GuardComparisonHooks> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    SmallVector<CallInst *, 0> hooks;
    for (Function &F : M)
      for (BasicBlock &BB : F)
        for (Instruction &I : BB)
          if (auto *call = dyn_cast<CallInst>(&I))
            if (isComparisonHook(call->getCalledFunction())) hooks.push_back(call);
    if (hooks.empty()) return PreservedAnalyses::all();

    LLVMContext &C = M.getContext();
    Type *byte = Type::getInt8Ty(C);
    Constant *flag = M.getOrInsertGlobal(TRACING_FLAG, byte);
    MDNode *rarely = MDBuilder(C).createBranchWeights(1, 1 << 20);
    MDNode *noSanitize = MDNode::get(C, {});
    for (CallInst *hook : hooks) {
      IRBuilder<> irb(hook);
      LoadInst *tracing = irb.CreateLoad(byte, flag);
      tracing->setMetadata(LLVMContext::MD_nosanitize, noSanitize);
      Instruction *cold =
          SplitBlockAndInsertIfThen(irb.CreateIsNotNull(tracing), hook, false, rarely);
      // The operands' widening casts only feed the hook: they go to the cold block with it.
      BasicBlock *head = tracing->getParent();
      for (Value *arg : hook->args())
        if (auto *cast = dyn_cast<CastInst>(arg))
          if (cast->hasOneUse() && cast->getParent() == head) cast->moveBefore(cold);
      hook->moveBefore(cold);
    }
    return PreservedAnalyses::none();
  }
};

}  // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "lafuzz-cmp-guard", "1", [](PassBuilder &PB) {
            // SanitizerCoverage is added by clang's own optimizer-last callback, which clang
            // registers after the plugins' callbacks. Registering ours when the pipeline is
            // built (all callbacks are in by then) puts it after SanitizerCoverage.
            PB.registerPipelineStartEPCallback([&PB](ModulePassManager &, OptimizationLevel) {
              static bool registered = false;
              if (registered) return;
              registered = true;
              PB.registerOptimizerLastEPCallback(
                  [](ModulePassManager &MPM, OptimizationLevel) {
                    MPM.addPass(GuardComparisonHooks());
                  });
            });
          }};
}
