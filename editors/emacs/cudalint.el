;;; cudalint.el --- cudalint's language server in Eglot and lsp-mode  -*- lexical-binding: t; -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: languages, tools, nix
;; URL: https://github.com/cudalint/cudalint

;;; Commentary:

;; Diagnostics, quick fixes, hover and completion for Nix expressions that use NVIDIA CUDA
;; packages, from `cudalint server' (or, next to another Eglot server, from `cudalint check').
;;
;; Eglot runs one server per buffer.  If you use nil or nixd with Eglot, keep them and add
;; cudalint's findings as a Flymake backend (the command line, run on the buffer's text):
;;
;;   (require 'cudalint)
;;   (cudalint-flymake-setup)          ; cudalint's findings next to nil's or nixd's
;;
;; To run cudalint as the Eglot server of Nix buffers instead (its quick fixes and hover too,
;; but no nil or nixd there):
;;
;;   (cudalint-eglot-setup)
;;   (add-hook 'nix-mode-hook #'eglot-ensure)
;;
;; lsp-mode runs servers side by side: with lsp-mode loaded, `cudalint-lsp-setup' registers
;; cudalint as an add-on next to them.
;;
;; No Nix major mode installed (Debian packages none)?  `cudalint-nix-mode' is a minimal one:
;; (cudalint-ensure-nix-mode) uses it for .nix files when neither nix-mode nor nix-ts-mode exists.
;;
;; Settings (the keys of cudalint.toml) go in `cudalint-settings', or per project in
;; .dir-locals.el:
;;
;;   ((nix-mode . ((eglot-workspace-configuration . (:cudalint (:nixpkgs "25.11"))))))

;;; Code:

(defgroup cudalint nil
  "cudalint's language server for Nix expressions that use CUDA packages."
  :group 'tools
  :prefix "cudalint-")

(defcustom cudalint-server-command '("cudalint" "server")
  "The command that starts the language server: the program and its arguments."
  :type '(repeat string))

(defcustom cudalint-modes '(nix-mode nix-ts-mode cudalint-nix-mode)
  "Major modes of the Nix buffers cudalint checks."
  :type '(repeat symbol))

(defcustom cudalint-settings nil
  "Settings sent to the server when it starts, as a plist of cudalint.toml keys.
For example (:nixpkgs \"25.11\" :select [\"CUDA1\"] :unsafe-fixes t).
Unset keys leave the project's cudalint.toml in charge."
  :type 'plist)

(defconst cudalint-install-hint
  "install it with `pipx install git+https://github.com/cudalint/cudalint' or `nix profile install github:cudalint/cudalint'"
  "How to get the server, for the message shown when it is missing.")

(defun cudalint--check-executable ()
  "Say how to install the server if `cudalint-server-command' cannot be found."
  (unless (executable-find (car cudalint-server-command))
    (display-warning 'cudalint
                     (format "`%s' not found: %s, or set `cudalint-server-command'"
                             (car cudalint-server-command) cudalint-install-hint))))

(defun cudalint-eglot-contact (&optional _interactive)
  "The Eglot contact for cudalint: the command and its initialization options."
  (cudalint--check-executable)
  `(,@cudalint-server-command :initializationOptions ,cudalint-settings))

;;;###autoload
(defun cudalint-eglot-setup ()
  "Make Eglot start cudalint for the modes in `cudalint-modes'."
  (with-eval-after-load 'eglot
    (defvar eglot-server-programs)
    (add-to-list 'eglot-server-programs (cons cudalint-modes #'cudalint-eglot-contact))))

;;;###autoload
(define-derived-mode cudalint-nix-mode prog-mode "Nix"
  "A minimal mode for Nix files, for Emacsen without nix-mode or nix-ts-mode."
  (setq-local comment-start "# ")
  (setq-local comment-start-skip "#+\\s-*"))

;;;###autoload
(defun cudalint-ensure-nix-mode ()
  "Open .nix files in `cudalint-nix-mode' when no other Nix mode is installed."
  (unless (or (fboundp 'nix-mode) (fboundp 'nix-ts-mode))
    (add-to-list 'auto-mode-alist '("\\.nix\\'" . cudalint-nix-mode))))

;;; Flymake, next to another Eglot server

(defcustom cudalint-check-command '("cudalint" "check")
  "The command of the Flymake backend: `cudalint check', reading standard input."
  :type '(repeat string))

(defvar-local cudalint--flymake-process nil
  "The running `cudalint check' of this buffer, if any.")

(defun cudalint--json-findings (text)
  "The findings in TEXT, `cudalint check --output-format json' output (alists)."
  (condition-case nil
      (append (json-parse-string text :object-type 'alist :array-type 'list :null-object nil) nil)
    (error nil)))

(defun cudalint--position (location)
  "The buffer position of LOCATION: a 1-based row and column, in characters."
  (save-excursion
    (goto-char (point-min))
    (forward-line (1- (alist-get 'row location)))
    (min (point-max) (+ (point) (1- (alist-get 'column location))))))

(defun cudalint--flymake-diagnostics (source findings)
  "Flymake diagnostics of FINDINGS in buffer SOURCE."
  (with-current-buffer source
    (mapcar
     (lambda (finding)
       (let* ((beg (cudalint--position (alist-get 'location finding)))
              (end (max (1+ beg) (cudalint--position (alist-get 'end_location finding))))
              (type (pcase (alist-get 'severity finding)
                      ("error" :error) ("warning" :warning) (_ :note))))
         (flymake-make-diagnostic source beg (min end (point-max)) type
                                  (format "%s %s" (alist-get 'code finding) (alist-get 'message finding)))))
     findings)))

;;;###autoload
(defun cudalint-flymake (report-fn &rest _args)
  "A Flymake backend: `cudalint check' on the buffer, findings to REPORT-FN.
The project's cudalint.toml applies: the file name is the --stdin-filename."
  (unless (executable-find (car cudalint-check-command))
    (error "`%s' not found: %s" (car cudalint-check-command) cudalint-install-hint))
  (when (process-live-p cudalint--flymake-process)
    (kill-process cudalint--flymake-process))
  (let* ((source (current-buffer))
         (name (or buffer-file-name (expand-file-name (buffer-name))))
         (output (generate-new-buffer " *cudalint-flymake*"))
         (process
          (make-process
           :name "cudalint-flymake" :noquery t :connection-type 'pipe
           :buffer output
           :stderr (get-buffer-create " *cudalint-flymake-stderr*")
           :command (append cudalint-check-command
                            (list "--output-format" "json" "--exit-zero" "--quiet"
                                  "--stdin-filename" name "-"))
           :sentinel
           (lambda (process _event)
             (when (memq (process-status process) '(exit signal))
               (unwind-protect
                   (when (and (buffer-live-p source)
                              (eq process (buffer-local-value 'cudalint--flymake-process source)))
                     (if (zerop (process-exit-status process))
                         (funcall report-fn
                                  (cudalint--flymake-diagnostics
                                   source (cudalint--json-findings
                                           (with-current-buffer (process-buffer process) (buffer-string)))))
                       (funcall report-fn :panic
                                :explanation (format "cudalint check exited %d" (process-exit-status process)))))
                 (kill-buffer (process-buffer process))))))))
    (setq cudalint--flymake-process process)
    (save-restriction
      (widen)
      (process-send-region process (point-min) (point-max)))
    (process-send-eof process)))

(defun cudalint--add-flymake-backend ()
  "Add `cudalint-flymake' to this buffer's Flymake backends (again after Eglot)."
  (add-hook 'flymake-diagnostic-functions #'cudalint-flymake nil t))

;;;###autoload
(defun cudalint-flymake-setup ()
  "Run `cudalint-flymake' in `cudalint-modes' buffers, next to any Eglot server."
  (dolist (mode cudalint-modes)
    (add-hook (intern (format "%s-hook" mode)) #'cudalint--add-flymake-backend)
    (add-hook (intern (format "%s-hook" mode)) #'flymake-mode 90))
  ;; Eglot replaces a buffer's Flymake backends with its own when it takes the buffer over.
  (add-hook 'eglot-managed-mode-hook
            (lambda () (when (apply #'derived-mode-p cudalint-modes) (cudalint--add-flymake-backend)))))

(declare-function lsp-register-client "lsp-mode")
(declare-function make-lsp-client "lsp-mode")
(declare-function lsp-stdio-connection "lsp-mode")
(declare-function lsp-activate-on "lsp-mode")
(defvar lsp-language-id-configuration)

;;;###autoload
(defun cudalint-lsp-setup ()
  "Register cudalint with lsp-mode, as an add-on next to other Nix servers."
  (with-eval-after-load 'lsp-mode
    (dolist (mode cudalint-modes)
      (add-to-list 'lsp-language-id-configuration (cons mode "nix")))
    (lsp-register-client
     (make-lsp-client
      :new-connection (lsp-stdio-connection (lambda () cudalint-server-command))
      :activation-fn (lsp-activate-on "nix")
      :initialization-options (lambda () cudalint-settings)
      :add-on? t
      :server-id 'cudalint))))

(provide 'cudalint)
;;; cudalint.el ends here
