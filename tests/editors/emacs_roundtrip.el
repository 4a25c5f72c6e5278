;;; emacs_roundtrip.el --- headless Eglot round trip with the real cudalint server  -*- lexical-binding: t; -*-

;; CUDALINT_EMACS_DIR=editors/emacs CUDALINT_EXPECTED=fixed.nix \
;;   emacs --batch -l tests/editors/emacs_roundtrip.el file.nix
;;
;; open -> Eglot attaches -> wait for the Flymake diagnostic -> `eglot-code-actions' (the
;; interactive path, with the menu answered) -> the edit is applied -> didChange -> the
;; diagnostic clears -> the buffer equals CUDALINT_EXPECTED.  Exits 0 after printing
;; "cudalint round trip: ok", else 1.  Not `-Q': Debian's elpa-eglot loads through
;; `package-initialize'.

;;; Code:

(load (expand-file-name "emacs_test_support" (file-name-directory load-file-name)) nil t)
(setq cudalint-test-name "round trip")

(defun cudalint-test-diagnostics ()
  (cl-remove-if-not (lambda (d) (string-match-p "CUDA[0-9]+" (flymake-diagnostic-text d)))
                    (flymake-diagnostics)))

(defun cudalint-test-run (file expected)
  (add-to-list 'load-path (getenv "CUDALINT_EMACS_DIR"))
  (require 'cudalint)
  ;; Debian has no nix-mode package: a derived mode stands in for it.
  (unless (fboundp 'nix-mode)
    (define-derived-mode nix-mode prog-mode "Nix"))
  (add-to-list 'auto-mode-alist '("\\.nix\\'" . nix-mode))
  (setq cudalint-settings '(:nixpkgs "25.05"))
  (cudalint-eglot-setup)
  (find-file file)
  (unless (eq major-mode 'nix-mode)
    (cudalint-test-fail "%s opened in %s" file major-mode))
  (apply #'eglot (eglot--guess-contact))
  (cudalint-test-wait "Eglot to manage the buffer" (lambda () (eglot-current-server)))
  (cudalint-test-say "Emacs %s, Eglot %s, server %S" emacs-version
                     (let ((package (cadr (assq 'eglot package-alist))))
                       (if package (package-version-join (package-desc-version package)) "built in"))
                     (process-command (jsonrpc--process (eglot-current-server))))
  (cudalint-test-wait "cudalint's diagnostic" #'cudalint-test-diagnostics)
  (let* ((diagnostics (cudalint-test-diagnostics))
         (diagnostic (car diagnostics))
         (beg (flymake-diagnostic-beg diagnostic))
         (end (flymake-diagnostic-end diagnostic))
         (covered (buffer-substring-no-properties beg end))
         (titles nil))
    (cudalint-test-say "diagnostic: %s" (truncate-string-to-width (flymake-diagnostic-text diagnostic) 70))
    (unless (= (length diagnostics) 1)
      (cudalint-test-fail "expected one diagnostic, got %d" (length diagnostics)))
    (unless (string-match-p "CUDA102" (flymake-diagnostic-text diagnostic))
      (cudalint-test-fail "expected CUDA102: %s" (flymake-diagnostic-text diagnostic)))
    ;; Emacs counts characters, the server UTF-16 code units: the span must cover the path.
    (unless (equal covered "/run/opengl-driver/lib")
      (cudalint-test-fail "the diagnostic covers %S" covered))
    (goto-char beg)
    (let ((tick (buffer-chars-modified-tick))
          ;; A non-list event: the menu is read with `completing-read', not a popup.
          (last-nonmenu-event ?\r))
      (cl-letf (((symbol-function 'completing-read)
                 (lambda (_prompt collection &rest _)
                   (setq titles (mapcar #'car collection))
                   (or (cl-find-if-not (lambda (title) (string-prefix-p "Ignore" title)) titles)
                       (cudalint-test-fail "no quick fix among %S" titles)))))
        (eglot-code-actions beg end "quickfix" t))
      (cudalint-test-say "actions offered: %S" titles)
      (when (< (length titles) 2)
        (cudalint-test-fail "expected the fix and the ignore action, got %S" titles))
      (when (= tick (buffer-chars-modified-tick))
        (cudalint-test-fail "the quick fix did not edit the buffer")))
    ;; Eglot sends didChange from an idle timer, which never fires in batch.
    (eglot--signal-textDocument/didChange)
    (cudalint-test-wait "the diagnostic to clear" (lambda () (null (cudalint-test-diagnostics))))
    (let ((text (buffer-substring-no-properties (point-min) (point-max)))
          (wanted (with-temp-buffer
                    (insert-file-contents expected)
                    (buffer-string))))
      (unless (equal text wanted)
        (cudalint-test-fail "the buffer is not what `cudalint check --fix' writes:\n%s" text)))
    (set-buffer-modified-p nil)
    (eglot-shutdown (eglot-current-server))))

(let ((file (car command-line-args-left))
      (expected (getenv "CUDALINT_EXPECTED")))
  (setq command-line-args-left nil)
  (unless (and file expected (getenv "CUDALINT_EMACS_DIR"))
    (cudalint-test-fail "usage: CUDALINT_EMACS_DIR=... CUDALINT_EXPECTED=... emacs --batch -l %s FILE"
                        load-file-name))
  (condition-case problem
      (cudalint-test-run (expand-file-name file) expected)
    (error (cudalint-test-fail "%s" (error-message-string problem))))
  (cudalint-test-say "cudalint round trip: ok")
  (kill-emacs 0))

;;; emacs_roundtrip.el ends here
