/* The object after gsdl_caller in the global scope. Its cublasGemmEx is an
 * unrelated library's function of that name, which the shim must leave
 * alone. */
char gs_dl_probe(void) { return 'N'; }
int cublasGemmEx(void) { return 77; }
