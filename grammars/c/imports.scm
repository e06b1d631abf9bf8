(preproc_include path: (_) @import.path) @import
