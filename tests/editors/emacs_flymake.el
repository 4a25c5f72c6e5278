;;; emacs_flymake.el --- cudalint's Flymake backend next to another Eglot server  -*- lexical-binding: t; -*-

;; CUDALINT_EMACS_DIR=editors/emacs CUDALINT_STUB_SERVER="python3 stub_lsp_server.py" \
;;   emacs --batch -l tests/editors/emacs_flymake.el file.nix
;;
;; The setup the package's commentary gives users of nil or nixd: no nix-mode installed
;; (`cudalint-ensure-nix-mode'), Eglot runs the stand-in Nix server, and `cudalint-flymake-setup'
;; adds cudalint's findings.  Prints "cudalint flymake: ok" and exits 0, else exits 1.

;;; Code:

(load (expand-file-name "emacs_test_support" (file-name-directory load-file-name)) nil t)
(setq cudalint-test-name "flymake")

(defun cudalint-test-run (file)
  (add-to-list 'load-path (getenv "CUDALINT_EMACS_DIR"))
  (require 'cudalint)
  (when (or (fboundp 'nix-mode) (fboundp 'nix-ts-mode))
    (cudalint-test-fail "this test wants an Emacs without a Nix mode"))
  (cudalint-ensure-nix-mode)
  (cudalint-flymake-setup)
  (add-to-list 'eglot-server-programs
               (cons 'cudalint-nix-mode (split-string-and-unquote (getenv "CUDALINT_STUB_SERVER"))))
  (find-file file)
  (unless (eq major-mode 'cudalint-nix-mode)
    (cudalint-test-fail "%s opened in %s" file major-mode))
  ;; `eglot-ensure' waits for a command loop that batch Emacs never runs: connect as it would
  (apply #'eglot (eglot--guess-contact))
  (cudalint-test-wait "Eglot to manage the buffer" (lambda () (eglot-current-server)))
  (unless (memq #'eglot-flymake-backend flymake-diagnostic-functions)
    (cudalint-test-fail "Eglot's backend is gone: %S" flymake-diagnostic-functions))
  (unless (memq #'cudalint-flymake flymake-diagnostic-functions)
    (cudalint-test-fail "cudalint's backend is gone: %S" flymake-diagnostic-functions))
  (cudalint-test-wait "cudalint's diagnostic"
                      (lambda () (cl-some (lambda (d) (string-prefix-p "CUDA102 " (flymake-diagnostic-text d)))
                                          (flymake-diagnostics)))
                      3)
  (let* ((diagnostic (cl-find-if (lambda (d) (string-prefix-p "CUDA102 " (flymake-diagnostic-text d)))
                                 (flymake-diagnostics)))
         (covered (buffer-substring-no-properties (flymake-diagnostic-beg diagnostic)
                                                  (flymake-diagnostic-end diagnostic))))
    (unless (eq (flymake-diagnostic-backend diagnostic) #'cudalint-flymake)
      (cudalint-test-fail "reported by %S" (flymake-diagnostic-backend diagnostic)))
    (unless (eq (flymake-diagnostic-type diagnostic) :warning)
      (cudalint-test-fail "type %S" (flymake-diagnostic-type diagnostic)))
    (unless (equal covered "/run/opengl-driver/lib")
      (cudalint-test-fail "the diagnostic covers %S" covered))
    ;; an edit that removes the finding clears it on the next check
    (goto-char (flymake-diagnostic-beg diagnostic))
    (delete-region (flymake-diagnostic-beg diagnostic) (flymake-diagnostic-end diagnostic))
    (insert "${addDriverRunpath.driverLink}/lib")
    (cudalint-test-wait "the diagnostic to clear"
                        (lambda () (not (cl-some (lambda (d) (string-prefix-p "CUDA102 " (flymake-diagnostic-text d)))
                                                 (flymake-diagnostics))))
                        3)
    (cudalint-test-say "cudalint flymake: ok")
    (kill-emacs 0)))

(let ((file (car command-line-args-left)))
  (setq command-line-args-left nil)
  (condition-case error
      (cudalint-test-run file)
    (error (cudalint-test-fail "%S" error))))

;;; emacs_flymake.el ends here
