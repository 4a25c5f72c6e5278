;;; emacs_test_support.el --- what the headless Emacs tests share  -*- lexical-binding: t; -*-

;; Loaded by emacs_roundtrip.el and emacs_flymake.el: the packages they use (not `-Q':
;; Debian's elpa-eglot loads through `package-initialize'), printing, failing and waiting.

;;; Code:

(require 'package)
(package-initialize)
(require 'cl-lib)
(require 'eglot)
(require 'flymake)

(defconst cudalint-test-timeout 30 "Seconds to wait for each step.")

(defvar cudalint-test-name "test" "What the script tests, for its FAILED line.")

(defun cudalint-test-say (format-string &rest args)
  (princ (concat (apply #'format format-string args) "\n") #'external-debugging-output))

(defun cudalint-test-fail (format-string &rest args)
  (cudalint-test-say "cudalint %s FAILED: %s" cudalint-test-name (apply #'format format-string args))
  (kill-emacs 1))

(defun cudalint-test-wait (what predicate &optional check-every)
  "Wait until PREDICATE holds, running the event loop; fail after the timeout.
Flymake's idle timers never fire in batch: a check is started by hand every CHECK-EVERY
seconds (default 0.1; a Flymake backend that runs a command wants longer, since a new check
cancels the one under way)."
  (let ((deadline (+ (float-time) cudalint-test-timeout))
        (next-check 0))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (cudalint-test-fail "timed out waiting for %s" what))
      (accept-process-output nil 0.1)
      (when (and (bound-and-true-p flymake-mode) (>= (float-time) next-check))
        (setq next-check (+ (float-time) (or check-every 0)))
        (flymake-start nil t)))))

(provide 'emacs_test_support)
;;; emacs_test_support.el ends here
